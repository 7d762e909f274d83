// SPDX-License-Identifier: GPL-2.0
//! The Prometheus text exposition format, version 0.0.4: what Prometheus
//! scrapes and what `promtool check metrics` lints. (OpenMetrics, the
//! only format of the `prometheus-client` crate, names a counter's family
//! without its `_total`, which promtool up to at least 2.42 cannot parse.)

use std::fmt::Write;

/// A metric family's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// One metric family: its samples share a name, help and type.
#[derive(Debug)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    pub fn new(name: &'static str, kind: Kind, help: &'static str) -> Self {
        debug_assert_eq!(kind == Kind::Counter, name.ends_with("_total"));
        Self {
            name,
            help,
            kind,
            samples: Vec::new(),
        }
    }

    /// Adds a sample with `labels` (name, value).
    pub fn push(&mut self, labels: &[(&'static str, &str)], value: f64) {
        let labels = labels.iter().map(|(k, v)| (*k, v.to_string())).collect();
        self.samples.push((labels, value));
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The family's lines; nothing for a family without samples.
    pub fn encode(&self, out: &mut String) {
        if self.is_empty() {
            return;
        }
        let _ = writeln!(out, "# HELP {} {}", self.name, escape(self.help, false));
        let _ = writeln!(out, "# TYPE {} {}", self.name, self.kind.name());
        for (labels, value) in &self.samples {
            out.push_str(self.name);
            if !labels.is_empty() {
                out.push('{');
                for (i, (k, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{k}=\"{}\"", escape(v, true));
                }
                out.push('}');
            }
            let _ = writeln!(out, " {}", number(*value));
        }
    }
}

/// Escapes a HELP text (backslash, newline) or a label value (and `"`).
fn escape(s: &str, quote: bool) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '"' if quote => o.push_str("\\\""),
            c => o.push(c),
        }
    }
    o
}

/// A sample value as the format writes it.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// Every family with samples, in order.
pub fn encode(families: &[Family]) -> String {
    let mut out = String::new();
    for f in families {
        f.encode(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_lines_and_escapes() {
        let mut f = Family::new("x_total", Kind::Counter, "a \\ help\nline");
        f.push(&[("bond", "mrbond0"), ("member", "a\"b\\c\nd")], 3.0);
        f.push(&[], 1.5);
        let mut out = String::new();
        f.encode(&mut out);
        assert_eq!(
            out,
            "# HELP x_total a \\\\ help\\nline\n# TYPE x_total counter\n\
             x_total{bond=\"mrbond0\",member=\"a\\\"b\\\\c\\nd\"} 3\nx_total 1.5\n"
        );
    }

    #[test]
    fn empty_family_writes_nothing() {
        let f = Family::new("y", Kind::Gauge, "h");
        assert_eq!(encode(&[f]), "");
    }

    #[test]
    fn large_counters_stay_integers() {
        assert_eq!(number(123_456_789_012.0), "123456789012");
        assert_eq!(number(f64::NAN), "NaN");
    }
}
