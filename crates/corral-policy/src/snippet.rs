//! The TOML a hint gives a person to add to a policy file, built in one place.
//!
//! A hint's TOML is pasted as it is shown, so it is a complete snippet: each table's
//! header on a line of its own, then its keys (`[env] allow = ["X"]` on one line is not
//! TOML). Several hints that land in one table make one snippet, with one header and one
//! key whose list holds every item, since TOML takes a key once in a table: four
//! `[env]`/`allow` pairs are a `duplicate key`.
//!
//! TOML takes a table once in a file too, so no spelling pastes below every file: where
//! the file has an `[env]` table already, a second `[env]` header is an error, and so is a
//! dotted `env.allow` at the top (it defines the same table). `[[rule]]` entries would
//! paste anywhere, but as one four-line entry per name, and a setting (`[effects]`,
//! `[sandbox]`) has no such form. So a snippet comes with the words for that file
//! ([`Snippet::pasting`]): its lines go in the table the file has, a list's items joined to
//! the list of the same name there, a setting in place of the one there. The tests of the
//! hints paste each snippet into an empty file and, following those words, into one that
//! has its table, and load both with [`crate::config::parse`].

use std::fmt;

/// One table's keys, in the order they were added.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Table {
    name: String,
    keys: Vec<(String, Value)>,
}

/// A value in a snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A list of strings (`allow = ["A", "B"]`).
    List(Vec<String>),
    /// A string (`interpreter_one_liner = "allow"`).
    Text(String),
    /// A boolean (`git_write = true`).
    Bool(bool),
}

/// Tables and keys for a policy file, rendered as TOML a person pastes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snippet {
    tables: Vec<Table>,
}

impl Snippet {
    /// An empty snippet.
    pub fn new() -> Self {
        Self::default()
    }

    /// `item` added to the list `key` of `[table]` (once).
    pub fn item(mut self, table: &str, key: &str, item: &str) -> Self {
        self.add(table, key, Value::List(vec![item.to_string()]));
        self
    }

    /// `key` of `[table]` set to `value` (a list's items joined to the list there).
    pub fn set(mut self, table: &str, key: &str, value: Value) -> Self {
        self.add(table, key, value);
        self
    }

    /// Everything `other` holds, added to this snippet: tables and keys it shares with
    /// this one are merged, a list's new items appended, a setting taking `other`'s value.
    pub fn merge(&mut self, other: Snippet) {
        for table in other.tables {
            for (key, value) in table.keys {
                self.add(&table.name, &key, value);
            }
        }
    }

    fn add(&mut self, table: &str, key: &str, value: Value) {
        let at = match self.tables.iter().position(|t| t.name == table) {
            Some(at) => at,
            None => {
                self.tables.push(Table {
                    name: table.to_string(),
                    keys: Vec::new(),
                });
                self.tables.len() - 1
            }
        };
        let keys = &mut self.tables[at].keys;
        match keys.iter_mut().find(|(k, _)| k == key) {
            Some((_, Value::List(items))) if matches!(value, Value::List(_)) => {
                let Value::List(more) = value else {
                    unreachable!("matched above")
                };
                for item in more {
                    if !items.contains(&item) {
                        items.push(item);
                    }
                }
            }
            Some((_, old)) => *old = value,
            None => keys.push((key.to_string(), value)),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The tables it sets, in order.
    pub fn tables(&self) -> impl Iterator<Item = &str> {
        self.tables.iter().map(|t| t.name.as_str())
    }

    /// Whether it sets `key` in `[table]`.
    pub fn sets(&self, table: &str, key: &str) -> bool {
        self.tables
            .iter()
            .any(|t| t.name == table && t.keys.iter().any(|(k, _)| k == key))
    }

    /// The words for a file that has one of its tables already, then the snippet on lines
    /// of its own after a blank line: what a hint ends with.
    ///
    /// ```text
    /// where the file has an [env] table already, these lines go in it instead (TOML takes
    /// a table once), a list's items joined to the list of the same name there:
    ///
    /// [env]
    /// allow = ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"]
    /// ```
    pub fn pasting(&self) -> String {
        let names: Vec<String> = self.tables().map(|t| format!("[{t}]")).collect();
        let (has, them) = match names.as_slice() {
            [one] => {
                let an = if one[1..].starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                (format!("{an} {one} table"), "it")
            }
            more => (
                format!("any of {} as a table", more.join(", ")),
                "that table",
            ),
        };
        let values = self.tables.iter().flat_map(|t| &t.keys).map(|(_, v)| v);
        let (lists, settings) = values.fold((false, false), |(l, s), v| match v {
            Value::List(_) => (true, s),
            _ => (l, true),
        });
        let how = match (lists, settings) {
            (true, true) => {
                ", a list's items joined to the list of the same name there, a setting in \
                 place of the one there"
            }
            (true, false) => ", a list's items joined to the list of the same name there",
            _ => ", a setting in place of the one there",
        };
        format!(
            "where the file has {has} already, these lines go in {them} instead (TOML takes \
             a table once){how}:\n\n{self}"
        )
    }
}

/// The snippet as TOML: each table's header, then its keys, a blank line between tables.
impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, table) in self.tables.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "[{}]", table.name)?;
            for (key, value) in &table.keys {
                write!(f, "{key} = ")?;
                match value {
                    Value::List(items) => {
                        let items: Vec<String> = items.iter().map(|s| string(s)).collect();
                        writeln!(f, "[{}]", items.join(", "))?;
                    }
                    Value::Text(text) => writeln!(f, "{}", string(text))?,
                    Value::Bool(b) => writeln!(f, "{b}")?,
                }
            }
        }
        Ok(())
    }
}

/// `text` as a TOML basic string: `"`, `\` and control characters escaped, the rest as
/// it is (Rust's `{:?}` is not TOML: it writes `\u{1b}`, TOML `\u001B`).
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn items_of_one_table_make_one_header_and_one_list() {
        let mut s = Snippet::new().item("env", "allow", "GIT_AUTHOR_NAME");
        for name in ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_AUTHOR_NAME"] {
            s.merge(Snippet::new().item("env", "allow", name));
        }
        s.merge(Snippet::new().set("effects", "script_file", Value::Text("allow".into())));
        assert_eq!(
            s.to_string(),
            "[env]\nallow = [\"GIT_AUTHOR_NAME\", \"GIT_AUTHOR_EMAIL\", \"GIT_COMMITTER_NAME\"]\n\
             \n[effects]\nscript_file = \"allow\"\n"
        );
        assert!(s.to_string().parse::<toml::Table>().is_ok());
    }

    #[test]
    fn the_words_say_where_the_lines_go_in_a_file_that_has_the_table() {
        let one = Snippet::new().item("sandbox", "network_allow", "example.org");
        assert_eq!(
            one.pasting(),
            "where the file has a [sandbox] table already, these lines go in it instead \
             (TOML takes a table once), a list's items joined to the list of the same name \
             there:\n\n[sandbox]\nnetwork_allow = [\"example.org\"]\n"
        );
        let two = Snippet::new()
            .set("sandbox", "git_write", Value::Bool(true))
            .item("env", "allow", "X");
        assert!(
            two.pasting()
                .starts_with("where the file has any of [sandbox], [env] as a table already"),
            "{}",
            two.pasting()
        );
    }

    proptest! {
        /// Whatever the text, the string is TOML that reads back as that text.
        #[test]
        fn a_string_reads_back_as_itself(text in any::<String>()) {
            let snippet = Snippet::new().item("exec", "allow", &text);
            let table: toml::Table = snippet.to_string().parse().unwrap();
            prop_assert_eq!(table["exec"]["allow"][0].as_str(), Some(text.as_str()));
        }
    }
}
