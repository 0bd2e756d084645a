//! A small getopt: skip a wrapper's own options to find the command it runs.
//! Parsing stops at the first operand (as with `getopt` and a leading `+`),
//! which is how every wrapper here treats the command that follows.

/// Which options of a wrapper take a value.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spec {
    /// Short options taking a value, attached (`-n5`) or as the next word.
    pub short_val: &'static str,
    /// Short options whose value, if any, is attached only (`-i{}`, `-e`).
    pub short_opt: &'static str,
    /// Long options (without `--`) taking a value as `--x=v` or `--x v`.
    pub long_val: &'static [&'static str],
    /// Whether `-5` is an option (as for `nice`).
    pub numeric: bool,
}

/// What the options said.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    /// Index of the first operand (`args.len()` if there is none).
    pub operand: usize,
    /// Every short option letter seen.
    pub shorts: Vec<char>,
    /// Every long option seen (without `--`).
    pub longs: Vec<&'a str>,
    /// Values given to short or long options: (`"n"` / `"signal"`, value).
    pub values: Vec<(String, &'a str)>,
}

impl Parsed<'_> {
    pub fn has(&self, short: char) -> bool {
        self.shorts.contains(&short)
    }

    pub fn has_long(&self, long: &str) -> bool {
        self.longs.contains(&long)
    }

    pub fn value(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
    }
}

pub(crate) fn parse<'a>(args: &'a [String], spec: &Spec) -> Parsed<'a> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            out.operand = i + 1;
            return out;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            out.longs.push(name);
            match value {
                Some(v) => out.values.push((name.to_string(), v)),
                None if spec.long_val.contains(&name) => {
                    if let Some(v) = args.get(i + 1) {
                        out.values.push((name.to_string(), v));
                    }
                    i += 1;
                }
                None => {}
            }
            i += 1;
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let body = &a[1..];
            if spec.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
                i += 1;
                continue;
            }
            for (j, c) in body.char_indices() {
                out.shorts.push(c);
                let rest = &body[j + c.len_utf8()..];
                if spec.short_val.contains(c) {
                    if rest.is_empty() {
                        if let Some(v) = args.get(i + 1) {
                            out.values.push((c.to_string(), v));
                        }
                        i += 1;
                    } else {
                        out.values.push((c.to_string(), rest));
                    }
                    break;
                }
                if spec.short_opt.contains(c) {
                    if !rest.is_empty() {
                        out.values.push((c.to_string(), rest));
                    }
                    break;
                }
            }
            i += 1;
            continue;
        }
        out.operand = i;
        return out;
    }
    out.operand = args.len();
    out
}
