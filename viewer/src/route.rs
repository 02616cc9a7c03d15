//! Where the viewer is: the URL's fragment, so every page has a link that works from
//! `file://` and from any static host (no server-side routing).

/// The pages of `site/`: hand-written, and the ones generated from the registry and the
/// grading code (Grades, Observers, CLI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Methodology,
    Grades,
    Observers,
    Standard,
    Classification,
    Sandbox,
    Environment,
    Output,
    CustomProbes,
    Backend,
    Badge,
    Safety,
    Troubleshooting,
    Fleet,
    Ci,
    Agents,
    Configuration,
    Cli,
    Roadmap,
    Changelog,
    Disclosure,
}

impl Page {
    pub const ALL: [Page; 21] = [
        Page::Methodology,
        Page::Grades,
        Page::Observers,
        Page::Standard,
        Page::Classification,
        Page::Sandbox,
        Page::Environment,
        Page::Output,
        Page::CustomProbes,
        Page::Backend,
        Page::Badge,
        Page::Safety,
        Page::Troubleshooting,
        Page::Fleet,
        Page::Ci,
        Page::Agents,
        Page::Configuration,
        Page::Cli,
        Page::Roadmap,
        Page::Changelog,
        Page::Disclosure,
    ];

    /// The pages the top bar links to; the footer links to every page.
    pub const NAV: [Page; 4] = [Page::Methodology, Page::Grades, Page::Configuration, Page::Cli];

    pub fn slug(self) -> &'static str {
        match self {
            Page::Methodology => "methodology",
            Page::Grades => "grades",
            Page::Observers => "observers",
            Page::Standard => "standard",
            Page::Classification => "classification",
            Page::Sandbox => "sandbox",
            Page::Environment => "environment",
            Page::Output => "output",
            Page::CustomProbes => "custom-probes",
            Page::Backend => "backend",
            Page::Badge => "badge",
            Page::Safety => "safety",
            Page::Troubleshooting => "troubleshooting",
            Page::Fleet => "fleet",
            Page::Ci => "ci",
            Page::Agents => "agents",
            Page::Configuration => "configuration",
            Page::Cli => "cli",
            Page::Roadmap => "roadmap",
            Page::Changelog => "changelog",
            Page::Disclosure => "disclosure",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Page::Methodology => "Methodology",
            Page::Grades => "Grades",
            Page::Observers => "Observers",
            Page::Standard => "Standard versus custom",
            Page::Classification => "Classification",
            Page::Sandbox => "Sandbox",
            Page::Environment => "Environment",
            Page::Output => "Output",
            Page::CustomProbes => "Custom probes",
            Page::Backend => "Verify a server that fronts a backend",
            Page::Badge => "Add a README badge",
            Page::Safety => "Safety",
            Page::Troubleshooting => "Troubleshooting",
            Page::Fleet => "Vet many servers",
            Page::Ci => "Gate CI",
            Page::Agents => "Humans, CI and agents",
            Page::Configuration => "Configuration",
            Page::Cli => "CLI",
            Page::Roadmap => "Roadmap",
            Page::Changelog => "Changelog",
            Page::Disclosure => "Disclosure policy",
        }
    }
}

/// One place in the viewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The record (or, without one, how to open one); a combined record as its table.
    Report,
    /// The record, scrolled to one of its packs (`pack-fs`) or checks (`check-fs-read-escape`).
    At(String),
    /// One server's report in a combined record.
    Server(String),
    /// Every pack, optionally scrolled to one.
    Packs(Option<String>),
    /// The checks reference: every check, grouped by pack.
    Checks,
    /// One check's page.
    Check(String),
    /// A hand-written page, optionally scrolled to a section.
    Page(Page, Option<String>),
}

impl Route {
    /// The route a fragment names (`#/checks/fs-read-escape`); anything unknown is the report.
    pub fn parse(hash: &str) -> Route {
        let path = hash.trim_start_matches('#').trim_start_matches('/');
        let mut parts = path.splitn(2, '/');
        let head = parts.next().unwrap_or("");
        let rest = parts.next().filter(|r| !r.is_empty()).map(str::to_string);
        match head {
            "packs" => Route::Packs(rest),
            "at" => rest.map_or(Route::Report, Route::At),
            "servers" => rest.map_or(Route::Report, Route::Server),
            "checks" => rest.map_or(Route::Checks, Route::Check),
            _ => Page::ALL.into_iter().find(|p| p.slug() == head).map_or(Route::Report, |p| Route::Page(p, rest)),
        }
    }

    /// The fragment that leads here.
    pub fn href(&self) -> String {
        let with = |base: &str, rest: &Option<String>| match rest {
            Some(r) => format!("#/{base}/{r}"),
            None => format!("#/{base}"),
        };
        match self {
            Route::Report => "#/".to_string(),
            Route::At(id) => format!("#/at/{id}"),
            Route::Server(name) => format!("#/servers/{name}"),
            Route::Packs(p) => with("packs", p),
            Route::Checks => "#/checks".to_string(),
            Route::Check(id) => format!("#/checks/{id}"),
            Route::Page(p, section) => with(p.slug(), section),
        }
    }

    /// The element to scroll to once the page is drawn.
    pub fn anchor(&self) -> Option<String> {
        match self {
            Route::Packs(Some(p)) => Some(format!("pack-{p}")),
            Route::At(id) => Some(id.clone()),
            Route::Page(_, Some(s)) => Some(s.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_reads_back_from_its_own_link() {
        let routes = [
            Route::Report,
            Route::At("pack-fs".into()),
            Route::At("check-fs-read-escape".into()),
            Route::Packs(None),
            Route::Packs(Some("fs".into())),
            Route::Checks,
            Route::Check("fs-read-escape".into()),
            Route::Server("alpha".into()),
            Route::Page(Page::Methodology, None),
            Route::Page(Page::Configuration, Some("probes".into())),
            Route::Page(Page::Cli, None),
            Route::Page(Page::CustomProbes, Some("verdicts".into())),
            Route::Page(Page::Standard, Some("the-configuration-hash".into())),
        ];
        for page in Page::ALL {
            assert_eq!(Route::parse(&Route::Page(page, None).href()), Route::Page(page, None), "{}", page.slug());
        }
        for r in routes {
            assert_eq!(Route::parse(&r.href()), r, "{}", r.href());
        }
    }

    #[test]
    fn an_unknown_or_empty_fragment_is_the_report() {
        for h in ["", "#", "#/", "#/nowhere", "#pack-fs"] {
            assert_eq!(Route::parse(h), Route::Report, "{h}");
        }
        assert_eq!(Route::Page(Page::Configuration, Some("probes".into())).anchor().as_deref(), Some("probes"));
        assert_eq!(Route::Packs(Some("db".into())).anchor().as_deref(), Some("pack-db"));
    }
}
