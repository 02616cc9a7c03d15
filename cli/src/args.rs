//! The command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "sealmark",
    version,
    about = "Deterministic security test harness for MCP servers: fixed probes, harness-owned targets, verdicts backed by evidence."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Grade a server: start it, probe it, print the report.
    #[command(after_help = "Exit codes: 0 every graded pack met the gate; 1 a graded pack is below the gate \
(with --profile ci, also a pack that ran but could not be graded; with --baseline, also a regression; \
with --replay --strict, also a stored result the record's checks do not give); \
2 bad usage, config, record or environment; 130, 143, 129 stopped by SIGINT, SIGTERM, SIGHUP (after stopping the server and database and removing the sandbox).\n\n\
Quick form, no config needed:  sealmark run -- ./my-server --root {sandbox}   (or: sealmark run -- https://host/mcp)")]
    Run(Box<RunArgs>),
    /// Start the server as `run` would and say, pack by pack, what a run would do.
    #[command(after_help = "Exit codes: 0 the server was reached; 1 it was not; 2 bad usage or config.")]
    Doctor(TargetArgs),
    /// Write a commented starter sealmark.yaml for a server command; with --probes, print
    /// one valid call per tool of a server.
    Init(InitArgs),
    /// Print the standard profile (standard.yaml): every locked setting at its standard
    /// value, and the config.hash a STANDARD run carries.
    Standard,
    /// Print a published JSON Schema: of the record, the combined record, or sealmark.yaml.
    Schema {
        #[arg(value_enum)]
        of: SchemaOf,
    },
    /// List every check: id, pack, weight and label.
    ListChecks,
    /// Print the whole check registry as JSON.
    Describe,
    /// Print a check's page: probes, settings, verdict rule, what to fix, false results.
    Explain {
        /// A check id, as `sealmark list-checks` prints it.
        check: String,
    },
    /// Combine the records of shards (`run --shard I/N --format json`) into one combined
    /// record, in the config's order.
    #[command(
        after_help = "Exit codes: 0 merged; 2 a file is not a record, holds a server another file holds, or comes from another sealmark release."
    )]
    Merge(MergeArgs),
    /// Print a shell completion script, generated from these definitions (for bash:
    /// `sealmark completions bash > /etc/bash_completion.d/sealmark`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), generated from these definitions (`sealmark man | man -l -`).
    Man,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The records: combined records of shards, or single-server records of servers run
    /// with --server NAME.
    #[arg(required = true, value_name = "RECORD")]
    pub records: Vec<PathBuf>,
    /// Write the combined record to FILE instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// A server to start: a config, or the quick form after `--`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// The config file (default: ./sealmark.yaml when no command is given after --).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Seed a Postgres you control (a superuser URL) instead of starting an embedded one.
    #[arg(long, value_name = "DSN", conflicts_with = "no_embedded")]
    pub pg: Option<String>,
    /// Start no embedded Postgres.
    #[arg(long)]
    pub no_embedded: bool,
    /// Of a config with servers:, inspect only this one (default: each in turn).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// The server to run without a config: `-- <command> [args…]`, or `-- <URL>` for one
    /// already running at an http(s) URL.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The config file to write (or, with --probes, to read and append to).
    #[arg(long, short = 'c', value_name = "FILE", default_value = "sealmark.yaml")]
    pub config: PathBuf,
    /// Write the servers of an MCP client's config or a registry server.json as a
    /// sealmark.yaml (secrets as ${VARIABLE}, read from the environment at run time).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["probes", "command"])]
    pub from: Option<PathBuf>,
    /// Start the server and print one valid call per tool, as a probes: block.
    #[arg(long)]
    pub probes: bool,
    /// With --probes: append the block to the config when it has no probes: key yet.
    #[arg(long, requires = "probes")]
    pub write: bool,
    /// With --write: append without asking.
    #[arg(long, requires = "write")]
    pub yes: bool,
    /// With --probes: print the calls as JSON, for a program.
    #[arg(long, requires = "probes", conflicts_with = "write")]
    pub json: bool,
    /// The server command: `-- <command> [args…]`, or `-- <URL>` for one already running
    /// (required without --probes).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    Record,
    /// The combined record of a run of several servers.
    Combined,
    Config,
}

/// When the text report on stdout is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Profile {
    Ci,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Markdown,
    Junit,
    Sarif,
    Summary,
    Badge,
    Shields,
    /// A folder (index.html, the viewer and the record) that opens from any static host
    /// or from file://.
    Html,
}

impl Format {
    /// The file a format is written to with --out-dir.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Text => "sealmark-report.txt",
            Format::Json => "sealmark-report.json",
            Format::Markdown => "sealmark-report.md",
            Format::Junit => "sealmark-report.junit.xml",
            Format::Sarif => "sealmark-report.sarif",
            Format::Summary => "sealmark-report.summary.txt",
            Format::Badge => "sealmark-report.svg",
            Format::Shields => "sealmark-report.shields.json",
            Format::Html => "index.html",
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The config file (default: ./sealmark.yaml when no command is given after --).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Report format; repeat or comma-separate for several, written as files into
    /// --out-dir (default ./sealmark-report/). html is always a folder: index.html, the
    /// viewer and sealmark-report.json, to publish as it is.
    #[arg(long, short = 'f', value_enum, value_delimiter = ',', default_value = "text")]
    pub format: Vec<Format>,
    /// Write the report to FILE instead of standard output (one format only).
    #[arg(long, short = 'o', value_name = "FILE", conflicts_with = "out_dir")]
    pub out: Option<PathBuf>,
    /// Write each format as sealmark-report.<ext> into DIR.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Exit 1 when a graded pack is below LETTER (A, B, C, D or F). A provisional A* does not meet A.
    #[arg(long, value_name = "LETTER", default_value = "A")]
    pub fail_under: String,
    /// Run only these packs (repeat, or comma-separate); overrides `packs:` in the config.
    #[arg(long = "pack", value_name = "PACK", value_delimiter = ',')]
    pub packs: Vec<String>,
    /// Keep the sandbox directory after the run and print where it is.
    #[arg(long)]
    pub keep_sandbox: bool,
    /// Seed a Postgres you control (a superuser URL) instead of starting an embedded one.
    #[arg(long, value_name = "DSN", conflicts_with = "no_embedded")]
    pub pg: Option<String>,
    /// Start no embedded Postgres; database placeholders expand to empty strings.
    #[arg(long)]
    pub no_embedded: bool,
    /// Start the upstream stub (as upstream.kind: http); the server must use {upstream}.
    #[arg(long)]
    pub upstream: bool,
    /// Start servers with no package cache: by default they get the npm, uv and pip caches
    /// of this machine (listed under `inherited` in the report), so `npx -y` and `uvx`
    /// servers start without downloading themselves again.
    #[arg(long)]
    pub no_package_caches: bool,
    /// Run the probes marked active: true, which make the server run commands (the
    /// harness programs sm-echo, sm-canary, sm-sleep, sm-spew) or have side effects, and
    /// the git probes that call tools that write (on the harness's {repo}).
    #[arg(long)]
    pub active: bool,
    /// Caller a's token for a server that accepts only its own, as '${VARIABLE}' (read
    /// from the environment; quote it so the shell does not expand it). Overrides identities.a.
    #[arg(long, value_name = "'${VAR}'")]
    pub identity_a: Option<String>,
    /// Caller b's token, as --identity-a. Overrides identities.b.
    #[arg(long, value_name = "'${VAR}'")]
    pub identity_b: Option<String>,
    /// Render a saved record (any format) without starting a server: its checks judged
    /// again from its observations and graded by this build's formula. Every stored
    /// verdict, grade and weight that differs is named on stderr and in the report.
    #[arg(long, value_name = "RECORD", conflicts_with_all = ["config", "command"])]
    pub replay: Option<PathBuf>,
    /// With --replay: exit 1 when a stored verdict, grade or weight is not what the
    /// record's observations and checks give (a record edited, or made by another build).
    #[arg(long, requires = "replay")]
    pub strict: bool,
    /// Compare with a saved record: list regressions (exit 1 when a verdict got worse),
    /// new checks, a different configuration and tool-surface drift.
    #[arg(long, value_name = "RECORD")]
    pub baseline: Option<PathBuf>,
    /// Run the servers an MCP client already has: a Claude Desktop, Cursor or Windsurf
    /// config (mcpServers), a VS Code mcp.json (servers) or a registry server.json. Paths
    /// and database URLs are aimed at the harness's own targets; what changed is listed.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["config", "command", "replay"])]
    pub from: Option<PathBuf>,
    /// Of a config with servers:, run only this one (default: every one, a run of several).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["shard", "replay"])]
    pub server: Option<String>,
    /// Of a config with servers:, run every Nth from the Ith (I/N, from 1/N), for a CI
    /// matrix or an indexed Job; `sealmark merge` combines the shards' records.
    #[arg(long, value_name = "I/N", conflicts_with = "replay")]
    pub shard: Option<String>,
    /// In a run of several, run up to N servers at once, each in its own process.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// ci: a pack that ran but could not be graded (inconclusive) also fails the gate.
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// More evidence in the text report: -v the evidence of every check that did not pass
    /// (five lines each), -vv all of it. Never a different verdict.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress line on stderr (there is none anyway when stderr is not a terminal).
    #[arg(short, long)]
    pub quiet: bool,
    /// Colour the text report on stdout: auto (on a terminal, unless NO_COLOR is set),
    /// always or never. Files are never coloured.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub color: ColorChoice,
    /// The server to run, for the quick form without a config: `-- <command> [args…]`, or
    /// `-- <URL>` for one already running at an http(s) URL (its `user:password@` sent as a
    /// Basic credential, and hidden in every output).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
