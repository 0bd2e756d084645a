//! Named keys, in tmux's spelling, turned into the bytes a terminal sends for them.
//!
//! `Enter`, `Tab`, `BTab`, `Escape`, `BSpace`, `Space`, `Up`, `Down`, `Left`, `Right`,
//! `Home`, `End`, `PageUp`, `PageDown`, `Delete`, `Insert`, `F1`…`F12`, `C-a`…`C-z` (and
//! `C-@`, `C-[`, `C-\`, `C-]`, `C-^`, `C-_`), `M-` before a key or one character (an ESC
//! first), plus `submit` (a carriage return, as Enter) and `paste:TEXT` (bracketed when the
//! program turned bracketed paste on). Names are matched case-insensitively, as tmux does.
//! Anything else is an error that lists the names: text goes through `shell_write`.

/// What the terminal's modes change about the bytes a key sends.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Modes {
    /// The program asked for application cursor keys (`ESC[?1h`): arrows send `ESC O x`.
    pub application_cursor: bool,
    /// The program turned bracketed paste on (`ESC[?2004h`).
    pub bracketed_paste: bool,
}

/// The names [`encode`] knows, for error messages and docs.
pub(crate) const NAMES: &str = "Enter, Tab, BTab, Escape, BSpace, Space, Up, Down, Left, Right, Home, End, \
     PageUp, PageDown, Delete, Insert, F1…F12, C-a…C-z, C-@, C-[, C-\\, C-], C-^, C-_, \
     M-<key or character>, submit, paste:TEXT";

/// The bytes for `keys`, in order.
pub(crate) fn encode(keys: &[String], modes: Modes) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for key in keys {
        encode_one(key, modes, &mut out)?;
    }
    Ok(out)
}

fn encode_one(key: &str, modes: Modes, out: &mut Vec<u8>) -> Result<(), String> {
    if let Some(text) = key.strip_prefix("paste:") {
        if modes.bracketed_paste {
            out.extend_from_slice(b"\x1b[200~");
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\x1b[201~");
        } else {
            out.extend_from_slice(text.as_bytes());
        }
        return Ok(());
    }
    if let Some(bytes) = named(key, modes) {
        out.extend_from_slice(&bytes);
        return Ok(());
    }
    if let Some(rest) = key.strip_prefix("M-").or_else(|| key.strip_prefix("m-")) {
        let mut chars = rest.chars();
        if let (Some(c), None) = (chars.next(), chars.clone().next()) {
            out.push(0x1b);
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            return Ok(());
        }
        if let Some(bytes) = named(rest, modes) {
            out.push(0x1b);
            out.extend_from_slice(&bytes);
            return Ok(());
        }
    }
    Err(if key.is_empty() {
        format!("an empty key name: the keys are {NAMES}; send text with shell_write")
    } else {
        format!(
            "`{key}` is not a key name: the keys are {NAMES}; send text with shell_write, or as \
             paste:TEXT"
        )
    })
}

/// A key by name (not `M-`), or `None`.
fn named(key: &str, modes: Modes) -> Option<Vec<u8>> {
    let csi_or_ss3 = |c: u8| -> Vec<u8> {
        if modes.application_cursor {
            vec![0x1b, b'O', c]
        } else {
            vec![0x1b, b'[', c]
        }
    };
    let lower = key.to_ascii_lowercase();
    let bytes: Vec<u8> = match lower.as_str() {
        "enter" | "submit" => b"\r".to_vec(),
        "tab" => b"\t".to_vec(),
        "btab" => b"\x1b[Z".to_vec(),
        "escape" | "esc" => b"\x1b".to_vec(),
        "bspace" => b"\x7f".to_vec(),
        "space" => b" ".to_vec(),
        "up" => csi_or_ss3(b'A'),
        "down" => csi_or_ss3(b'B'),
        "right" => csi_or_ss3(b'C'),
        "left" => csi_or_ss3(b'D'),
        "home" => csi_or_ss3(b'H'),
        "end" => csi_or_ss3(b'F'),
        "pageup" | "ppage" => b"\x1b[5~".to_vec(),
        "pagedown" | "npage" => b"\x1b[6~".to_vec(),
        "delete" | "dc" => b"\x1b[3~".to_vec(),
        "insert" | "ic" => b"\x1b[2~".to_vec(),
        "f1" => b"\x1bOP".to_vec(),
        "f2" => b"\x1bOQ".to_vec(),
        "f3" => b"\x1bOR".to_vec(),
        "f4" => b"\x1bOS".to_vec(),
        "f5" => b"\x1b[15~".to_vec(),
        "f6" => b"\x1b[17~".to_vec(),
        "f7" => b"\x1b[18~".to_vec(),
        "f8" => b"\x1b[19~".to_vec(),
        "f9" => b"\x1b[20~".to_vec(),
        "f10" => b"\x1b[21~".to_vec(),
        "f11" => b"\x1b[23~".to_vec(),
        "f12" => b"\x1b[24~".to_vec(),
        _ => {
            let rest = lower.strip_prefix("c-")?;
            let mut chars = rest.chars();
            let c = chars.next()?;
            if chars.next().is_some() {
                return None;
            }
            let byte = match c {
                'a'..='z' => c as u8 - b'a' + 1,
                '@' | ' ' => 0,
                '[' => 0x1b,
                '\\' => 0x1c,
                ']' => 0x1d,
                '^' => 0x1e,
                '_' => 0x1f,
                '?' => 0x7f,
                _ => return None,
            };
            vec![byte]
        }
    };
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str], modes: Modes) -> Result<Vec<u8>, String> {
        encode(&k.iter().map(|s| s.to_string()).collect::<Vec<_>>(), modes)
    }

    #[test]
    fn names_become_bytes() {
        let m = Modes::default();
        assert_eq!(keys(&["C-c"], m).unwrap(), b"\x03");
        assert_eq!(keys(&["C-a", "C-z"], m).unwrap(), b"\x01\x1a");
        assert_eq!(keys(&["Enter", "submit"], m).unwrap(), b"\r\r");
        assert_eq!(keys(&["Up", "BSpace", "Tab"], m).unwrap(), b"\x1b[A\x7f\t");
        assert_eq!(keys(&["M-x", "M-Enter"], m).unwrap(), b"\x1bx\x1b\r");
        assert_eq!(keys(&["F1", "F12"], m).unwrap(), b"\x1bOP\x1b[24~");
        assert_eq!(keys(&["enter"], m).unwrap(), b"\r");
    }

    #[test]
    fn modes_change_arrows_and_paste() {
        let app = Modes {
            application_cursor: true,
            bracketed_paste: true,
        };
        assert_eq!(keys(&["Up"], app).unwrap(), b"\x1bOA");
        assert_eq!(keys(&["paste:hi"], app).unwrap(), b"\x1b[200~hi\x1b[201~");
        assert_eq!(keys(&["paste:hi"], Modes::default()).unwrap(), b"hi");
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = keys(&["Enterr"], Modes::default()).unwrap_err();
        assert!(err.contains("`Enterr`") && err.contains("BSpace"), "{err}");
        assert!(keys(&["a"], Modes::default()).is_err());
        assert!(keys(&["C-1"], Modes::default()).is_err());
    }
}
