//! What a containment unit is made of, as data: the base that holds the processes, the
//! bound on how many, whether the kernel placed each child at birth, and whether a PID
//! namespace is around it. A unit's name (`cgroup-v2+pids+pid-ns`), which every result
//! and step row carries, is written from this; whoever asks what a unit holds (the
//! sandbox's report, the box's own bound on processes) asks this, never the name.

/// The unit that holds a call's processes, beneath any layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    /// A cgroup v2 group of the call's own.
    Cgroup {
        /// The bound on processes it sets, if any.
        pids: PidsBound,
        /// Each child moves itself into the group before it execs, since the kernel
        /// cannot place it there at birth (`CLONE_INTO_CGROUP`, Linux 5.7).
        moved: bool,
    },
    /// Process groups, with corral a child subreaper where `subreaper`.
    ProcessGroups { subreaper: bool },
}

/// Where a cgroup's bound on processes is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PidsBound {
    None,
    /// `pids.max` in the call's own v2 group.
    V2,
    /// `pids.max` in a twin group of the v1 `pids` hierarchy.
    V1,
}

/// A unit, as data (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnitKind {
    pub base: Base,
    /// A PID namespace of the call's own is around the base.
    pub pid_namespace: bool,
}

impl UnitKind {
    /// A base unit, with no layer around it.
    pub(crate) const fn of(base: Base) -> UnitKind {
        UnitKind {
            base,
            pid_namespace: false,
        }
    }

    /// The same unit inside a PID namespace.
    pub(crate) const fn in_pid_namespace(self) -> UnitKind {
        UnitKind {
            pid_namespace: true,
            ..self
        }
    }

    /// Whether a cgroup bounds how many processes the call may have.
    pub(crate) fn bounds_processes(self) -> bool {
        matches!(
            self.base,
            Base::Cgroup {
                pids: PidsBound::V2 | PidsBound::V1,
                ..
            }
        )
    }

    /// The name results and the trace carry: the base's parts, then the layers', joined
    /// by `+` in the order they stack.
    pub(crate) fn name(self) -> &'static str {
        use Base::*;
        use PidsBound as P;
        let base = match self.base {
            Cgroup {
                pids: P::None,
                moved: false,
            } => "cgroup-v2",
            Cgroup {
                pids: P::V2,
                moved: false,
            } => "cgroup-v2+pids",
            Cgroup {
                pids: P::V1,
                moved: false,
            } => "cgroup-v2+pids-v1",
            Cgroup {
                pids: P::None,
                moved: true,
            } => "cgroup-v2+moved",
            Cgroup {
                pids: P::V2,
                moved: true,
            } => "cgroup-v2+pids+moved",
            Cgroup {
                pids: P::V1,
                moved: true,
            } => "cgroup-v2+pids-v1+moved",
            ProcessGroups { subreaper: true } => "process-group+subreaper",
            ProcessGroups { subreaper: false } => "process-group",
        };
        if !self.pid_namespace {
            return base;
        }
        match self.base {
            Cgroup {
                pids: P::None,
                moved: false,
            } => "cgroup-v2+pid-ns",
            Cgroup {
                pids: P::V2,
                moved: false,
            } => "cgroup-v2+pids+pid-ns",
            Cgroup {
                pids: P::V1,
                moved: false,
            } => "cgroup-v2+pids-v1+pid-ns",
            Cgroup {
                pids: P::None,
                moved: true,
            } => "cgroup-v2+moved+pid-ns",
            Cgroup {
                pids: P::V2,
                moved: true,
            } => "cgroup-v2+pids+moved+pid-ns",
            Cgroup {
                pids: P::V1,
                moved: true,
            } => "cgroup-v2+pids-v1+moved+pid-ns",
            ProcessGroups { subreaper: true } => "process-group+subreaper+pid-ns",
            ProcessGroups { subreaper: false } => "process-group+pid-ns",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_its_parts_in_stacking_order() {
        for pids in [PidsBound::None, PidsBound::V2, PidsBound::V1] {
            for moved in [false, true] {
                for ns in [false, true] {
                    let mut kind = UnitKind::of(Base::Cgroup { pids, moved });
                    if ns {
                        kind = kind.in_pid_namespace();
                    }
                    let mut parts = vec!["cgroup-v2"];
                    parts.extend(match pids {
                        PidsBound::None => None,
                        PidsBound::V2 => Some("pids"),
                        PidsBound::V1 => Some("pids-v1"),
                    });
                    parts.extend(moved.then_some("moved"));
                    parts.extend(ns.then_some("pid-ns"));
                    assert_eq!(kind.name(), parts.join("+"));
                    assert_eq!(kind.bounds_processes(), pids != PidsBound::None);
                }
            }
        }
        let groups = UnitKind::of(Base::ProcessGroups { subreaper: true });
        assert_eq!(groups.name(), "process-group+subreaper");
        assert_eq!(
            groups.in_pid_namespace().name(),
            "process-group+subreaper+pid-ns"
        );
        assert!(!groups.bounds_processes());
    }
}
