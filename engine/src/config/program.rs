//! Which of a server's arguments say where its program is, rather than what data it
//! works on: `node …/dist/index.js`, `python -m pkg`, `npx -y @scope/server`,
//! `uvx --from ./pkg server`, each behind any number of `env X=1` prefixes. A path
//! to the program is read, not written, so it is no blind spot of the sandbox.

/// Launchers that run a script named by their first plain argument.
const INTERPRETERS: [&str; 10] = ["node", "nodejs", "bun", "deno", "tsx", "ts-node", "ruby", "sh", "bash", "zsh"];

/// Subcommands a launcher takes before its program (`deno run`, `npm exec`, `uv run`).
const SUBCOMMANDS: [&str; 4] = ["run", "exec", "dlx", "x"];

/// Environment variables that say where programs and their libraries are found.
const PROGRAM_VARIABLES: [&str; 8] =
    ["PATH", "NODE_PATH", "NODE_OPTIONS", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "UV_PROJECT"];

/// The indexes of `args` that locate the program `command` runs; the arguments after
/// the program are its data.
pub fn program_args(command: &str, args: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut kind = Kind::of(base(command));
    let mut i = 0;
    while i < args.len() && kind != Kind::Program {
        let arg = args[i].as_str();
        let (locating, valued) = kind.flags();
        if arg == "--" || (SUBCOMMANDS.contains(&arg) && matches!(kind, Kind::Launcher | Kind::Script)) {
            i += 1;
        } else if kind == Kind::Env && is_assignment(arg) {
            // A variable's value is data unless its name says it finds programs.
            if arg.split_once('=').is_some_and(|(name, _)| PROGRAM_VARIABLES.contains(&name)) {
                out.push(i);
            }
            i += 1;
        } else if arg.starts_with('-') {
            let (name, inline) = arg.split_once('=').map_or((arg, false), |(n, _)| (n, true));
            let locates = locating.contains(&name);
            let takes = !inline && (locates || valued.contains(&name));
            if locates {
                out.extend([i, i + 1].into_iter().take(if takes { 2 } else { 1 }));
            }
            // `python -m module`, `-c code`: what follows them is the program's data.
            if kind == Kind::Python && matches!(name, "-m" | "-c") {
                out.push(i + 1);
                break;
            }
            i += if takes { 2 } else { 1 };
        } else {
            // The first plain argument is the program: a script, a package, or (after
            // `env` or `uv run`) another launcher whose arguments are read in turn.
            out.push(i);
            kind = match kind {
                Kind::Env | Kind::Launcher => Kind::of(base(arg)),
                _ => Kind::Program,
            };
            i += 1;
        }
    }
    out.retain(|&n| n < args.len());
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `env`: flags and assignments, then a program.
    Env,
    /// `uv`, `npm`, `pipx`…: a subcommand, then a program.
    Launcher,
    /// `npx`, `uvx`…: a package.
    Package,
    Python,
    /// `node`, `deno`, `bash`…: a script.
    Script,
    /// Anything else: every argument is the program's own.
    Program,
}

impl Kind {
    fn of(launcher: &str) -> Kind {
        match launcher {
            "env" => Kind::Env,
            "uv" | "npm" | "pnpm" | "yarn" | "pipx" => Kind::Launcher,
            "npx" | "pnpx" | "bunx" | "uvx" => Kind::Package,
            l if is_python(l) => Kind::Python,
            l if INTERPRETERS.contains(&l) => Kind::Script,
            _ => Kind::Program,
        }
    }

    /// The flags whose value locates code, and those whose value is something else.
    fn flags(self) -> (&'static [&'static str], &'static [&'static str]) {
        const FETCHED: &[&str] =
            &["-p", "--package", "--from", "--with", "--with-editable", "--python", "--directory", "--project"];
        match self {
            Kind::Env => (&[], &["-u", "--unset", "-C", "--chdir"]),
            Kind::Launcher | Kind::Package => (FETCHED, &["--index-url", "-c", "--call"]),
            Kind::Python => (&[], &["-X", "-W"]),
            Kind::Script => (
                &["-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file"],
                &["-e", "--eval", "-p", "--print"],
            ),
            Kind::Program => (&[], &[]),
        }
    }
}

/// `python`, `python3`, `python3.11`, `pypy3`.
fn is_python(name: &str) -> bool {
    let rest = name.strip_prefix("python").or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `NAME=value`, as `env` reads it.
fn is_assignment(arg: &str) -> bool {
    arg.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// The file name of a command, as it is found on PATH.
fn base(command: &str) -> &str {
    command.rsplit('/').next().unwrap_or(command)
}

/// Whether an environment variable of the server says where programs are found.
pub fn locates_programs(name: &str) -> bool {
    PROGRAM_VARIABLES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn located(line: &str) -> Vec<String> {
        let mut words = line.split_whitespace().map(String::from);
        let command = words.next().unwrap();
        let args: Vec<String> = words.collect();
        program_args(&command, &args).into_iter().map(|i| args[i].clone()).collect()
    }

    #[test]
    fn a_script_is_the_program_and_what_follows_is_data() {
        assert_eq!(located("node /opt/pkg/dist/index.js /srv/data"), ["/opt/pkg/dist/index.js"]);
        assert_eq!(
            located("/usr/bin/node --require /opt/hook.js /opt/pkg/dist/index.js --root /srv/data"),
            ["--require", "/opt/hook.js", "/opt/pkg/dist/index.js"]
        );
        assert_eq!(located("deno run -A /opt/server.ts /srv/data"), ["/opt/server.ts"]);
        assert_eq!(located("bash /opt/start.sh /srv/data"), ["/opt/start.sh"]);
    }

    #[test]
    fn python_runs_a_script_or_a_module() {
        assert_eq!(located("python3 /opt/server.py /srv/data"), ["/opt/server.py"]);
        assert_eq!(located("/opt/venv/bin/python3.11 -u -m mcp_server_git --repository /srv/repo"), ["mcp_server_git"]);
        assert_eq!(located("python -X utf8 /opt/server.py"), ["/opt/server.py"]);
    }

    #[test]
    fn package_runners_name_a_package_and_where_it_comes_from() {
        assert_eq!(
            located("npx -y @modelcontextprotocol/server-filesystem /srv/data"),
            ["@modelcontextprotocol/server-filesystem"]
        );
        assert_eq!(located("uvx --from /opt/pkg mcp-server-fetch"), ["--from", "/opt/pkg", "mcp-server-fetch"]);
        assert_eq!(
            located("uv run --directory /opt/pkg python server.py --db /srv/db.sqlite"),
            ["--directory", "/opt/pkg", "python", "server.py"]
        );
        assert_eq!(located("npm exec -- /opt/pkg /srv/data"), ["/opt/pkg"]);
    }

    #[test]
    fn env_prefixes_are_read_through_and_their_values_are_data_unless_they_find_programs() {
        assert_eq!(located("env X=1 node /opt/pkg/dist/index.js /srv/data"), ["node", "/opt/pkg/dist/index.js"]);
        assert_eq!(
            located("/usr/bin/env -u HOME PATH=/opt/node/bin DATA=/srv/data /opt/node/bin/node /opt/index.js"),
            ["PATH=/opt/node/bin", "/opt/node/bin/node", "/opt/index.js"]
        );
        assert_eq!(located("env NODE_PATH=/opt/lib npx -y pkg /srv/data"), ["NODE_PATH=/opt/lib", "npx", "pkg"]);
    }

    #[test]
    fn any_other_program_has_only_data() {
        assert!(located("/opt/bin/server --root /srv/data").is_empty());
        assert!(located("docker run -i --rm -v /srv:/srv image").is_empty());
    }
}
