//! What a call's processes may use together: a [`Limits`] value carried from the run's
//! configuration to the unit that applies it (the cgroup's `pids.max` and `memory.max`),
//! and the key of the pool of reusable groups (a group made for one bound is never handed
//! to a call with another).

use crate::config::{Config, MemoryMax};

/// A call's bounds, resolved: `None` for no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Processes and threads at once (`pids.max`).
    pub pids: Option<u32>,
    /// Bytes of memory, the whole call together (`memory.max`).
    pub memory: Option<u64>,
    /// Steps of niceness below corral's (see [`corral_sys::priority`]).
    pub nice: u8,
}

impl Limits {
    /// The bounds `config` asks for, [`MemoryMax::Default`] resolved against this host.
    pub(crate) fn of(config: &Config) -> Limits {
        Limits {
            pids: config.pids_max,
            memory: match config.memory_max {
                MemoryMax::Default => default_memory(),
                MemoryMax::Bytes(b) => Some(b),
                MemoryMax::Unbounded => None,
            },
            nice: config.nice,
        }
    }
}

/// Half of the smaller of the host's memory and the `memory.max` of corral's own cgroup
/// and each above it: what a container or a systemd slice allows corral is what its calls
/// share. Looked at once per process.
fn default_memory() -> Option<u64> {
    static DEFAULT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let total = mem_total();
        let ancestors = ancestors_memory_max();
        let least = match (total, ancestors) {
            (Some(t), Some(a)) => Some(t.min(a)),
            (t, a) => t.or(a),
        }?;
        Some(least / 2)
    })
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The least memory bound of corral's own cgroup and the groups above it: `memory.max`
/// in the unified hierarchy, `memory.limit_in_bytes` in a v1 `memory` one.
fn ancestors_memory_max() -> Option<u64> {
    use corral_sys::cgroup;
    let mounts = cgroup::Mounts::read()?;
    let v2 = mounts
        .v2()
        .and_then(|m| Some((cgroup::dir_of(&m, &cgroup::own_path_v2()?)?, m)))
        .and_then(|(dir, m)| least_up(dir, &m.point, "memory.max"));
    let v1 = mounts
        .v1("memory")
        .and_then(|m| Some((cgroup::dir_of(&m, &cgroup::own_path_v1("memory")?)?, m)))
        .and_then(|(dir, m)| least_up(dir, &m.point, "memory.limit_in_bytes"));
    [v2, v1].into_iter().flatten().min()
}

/// The least number `file` holds in `dir` and each group above it up to `top`. A v1
/// group without a bound says `9223372036854771712`: more than any host has.
fn least_up(mut dir: std::path::PathBuf, top: &std::path::Path, file: &str) -> Option<u64> {
    const UNBOUNDED: u64 = 1 << 62;
    let mut least: Option<u64> = None;
    loop {
        if let Some(max) = std::fs::read_to_string(dir.join(file))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .filter(|m| *m < UNBOUNDED)
        {
            least = Some(least.map_or(max, |l| l.min(max)));
        }
        if dir == top || !dir.pop() {
            break;
        }
    }
    least
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_half_of_what_the_host_has_at_most() {
        let config = Config::default();
        let limits = Limits::of(&config);
        let total = mem_total().expect("a Linux host says its memory");
        let memory = limits.memory.expect("a default bound");
        assert!(memory <= total / 2, "{memory} of {total}");
        assert!(memory > 0);
        let none = Limits::of(&Config {
            memory_max: MemoryMax::Unbounded,
            ..Config::default()
        });
        assert_eq!(none.memory, None);
    }
}
