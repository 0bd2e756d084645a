//! `[limits]`: what one call's processes may use together. Read by corral itself (the
//! policy does not use it); parsed here so a bad value is named with its file and line.

/// A call's memory bound as written: `"4G"`, `"512M"`, `"1.5G"`, a number of bytes,
/// `"none"` or `"default"` (half the host's memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    /// corral's default.
    Default,
    /// This many bytes.
    Bytes(u64),
    /// No bound.
    Unbounded,
}

/// The least a bound may be: below it no program starts.
pub const MEMORY_MIN: u64 = 4 << 20;

/// Parse a memory bound (units are binary: `G` is 2^30); the error says what to write.
pub fn parse_memory(text: &str) -> Result<MemoryLimit, String> {
    let t = text.trim();
    match t.to_ascii_lowercase().as_str() {
        "none" | "unbounded" | "max" => return Ok(MemoryLimit::Unbounded),
        "default" => return Ok(MemoryLimit::Default),
        _ => {}
    }
    let wrong = || {
        format!(
            "memory {text:?}: write a size such as \"4G\", \"512M\" or \"1.5G\", \"none\" for \
             no bound, or \"default\" (half the host's memory)"
        )
    };
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let unit = unit.trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(wrong()),
    };
    let value: f64 = number.trim().parse().map_err(|_| wrong())?;
    if !value.is_finite() || value <= 0.0 {
        return Err(wrong());
    }
    let bytes = (value * (1u64 << shift) as f64) as u64;
    if bytes < MEMORY_MIN {
        return Err(format!(
            "memory {text:?} is below 4M, too little for any program to start: give more, or \
             \"none\""
        ));
    }
    Ok(MemoryLimit::Bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_memory("4G"), Ok(MemoryLimit::Bytes(4 << 30)));
        assert_eq!(parse_memory("512M"), Ok(MemoryLimit::Bytes(512 << 20)));
        assert_eq!(parse_memory("1.5GiB"), Ok(MemoryLimit::Bytes(3 << 29)));
        assert_eq!(parse_memory("2gb"), Ok(MemoryLimit::Bytes(2 << 30)));
        assert_eq!(parse_memory("none"), Ok(MemoryLimit::Unbounded));
        assert_eq!(parse_memory("default"), Ok(MemoryLimit::Default));
        assert_eq!(parse_memory("8388608"), Ok(MemoryLimit::Bytes(8 << 20)));
        for bad in ["", "lots", "-1G", "4X", "1K", "NaN"] {
            assert!(parse_memory(bad).is_err(), "{bad}");
        }
    }
}
