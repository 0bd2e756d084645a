//! The `output` call of a run: which capture a request names (a step's stream, a live
//! handle's pieces, an ended handle's file), read within the run's budget and rendered
//! as [`crate::output`] renders a read.

use std::fs::File;
use std::path::PathBuf;

use crate::capture::reader::{self, Excerpt};
use crate::error::{Error, Result};
use crate::handle::table::Found;
use crate::output::{OutputRequest, OutputView, Pieces, Source, StreamName, render};
use crate::run::Run;

impl Run {
    /// See [`Run::output`].
    pub(crate) fn read_on(&self, request: &OutputRequest) -> Result<OutputView> {
        let call_json = serde_json::to_string(request).unwrap_or_default();
        self.interaction("output", call_json, |run| run.read_output(request))
    }

    fn read_output(&self, request: &OutputRequest) -> Result<OutputView> {
        let selection = request.selection()?;
        let (source, capture) = match (request.step, request.handle) {
            (Some(step), None) => {
                let stream = request.stream.unwrap_or_default();
                (Source::Step(step, stream), self.step_capture(step, stream)?)
            }
            (None, Some(handle)) => {
                if request.stream == Some(StreamName::Stderr) {
                    return Err(Error::invalid(
                        "a handle's stdout and stderr are one capture, in the order printed: leave stream out",
                    ));
                }
                (Source::Handle(handle), self.handle_capture(handle)?)
            }
            _ => {
                return Err(Error::invalid(
                    "output reads one capture: give step (from a result's `step`) or handle, not both or neither",
                ));
            }
        };
        let excerpt = match &capture {
            Capture::Empty => Ok(Excerpt::default()),
            Capture::File(path) => reader::read(|| File::open(path), &selection, self.budget()),
            Capture::Pieces(path, pieces) => reader::read(
                || Pieces::open(path, pieces.clone()),
                &selection,
                self.budget(),
            ),
        }
        .map_err(|e| Error::io("reading the capture", e))?;
        let pointer = self.ctx.pointer();
        Ok(OutputView {
            observation: render(&excerpt, &selection, source, &pointer),
            total_lines: excerpt.total_lines,
            total_bytes: excerpt.total_bytes,
            shown: excerpt.shown,
            matches: excerpt.matches,
        })
    }

    fn budget(&self) -> usize {
        self.ctx
            .config
            .output_budget
            .max(crate::config::MIN_READ_BUDGET)
    }

    fn step_capture(&self, step: i64, stream: StreamName) -> Result<Capture> {
        let row = self.ctx.store().step(step)?;
        let row = match row {
            Some(row) if row.run_id == self.ctx.id => row,
            _ => {
                return Err(Error::invalid(format!(
                    "step {step} is not a step of this run: read a step that a result of this run named \
                     (its `step` field)"
                )));
            }
        };
        if row.captures_pruned {
            return Err(Error::invalid(format!(
                "the captures of step {step} were removed by retention; only its observation is kept"
            )));
        }
        let (path, bytes) = match stream {
            StreamName::Stdout => (row.stdout_path, row.stdout_bytes),
            StreamName::Stderr => (row.stderr_path, row.stderr_bytes),
        };
        match path {
            Some(path) => Ok(Capture::File(PathBuf::from(path))),
            None if bytes == 0 => Ok(Capture::Empty),
            None => Err(Error::invalid(format!(
                "step {step} printed {bytes} bytes on {} but kept no capture of them",
                stream.word()
            ))),
        }
    }

    fn handle_capture(&self, handle: u32) -> Result<Capture> {
        match self.find(handle)? {
            Found::Live(live) => {
                let layout = live.progress().layout;
                if layout.total == 0 {
                    return Ok(Capture::Empty);
                }
                Ok(Capture::Pieces(live.capture.clone(), layout.held_pieces()))
            }
            Found::Retired(_, retired) if retired.layout.total == 0 => Ok(Capture::Empty),
            Found::Retired(_, retired) => Ok(Capture::Pieces(
                retired.capture,
                retired.layout.held_pieces(),
            )),
            Found::Orphan(row) => match row.capture_path {
                Some(path) => Ok(Capture::File(PathBuf::from(path))),
                None => Ok(Capture::Empty),
            },
        }
    }
}

/// Where a capture's bytes are.
enum Capture {
    /// Nothing was printed.
    Empty,
    /// A file in order.
    File(PathBuf),
    /// A live handle's file past its cap: the pieces in logical order.
    Pieces(PathBuf, Vec<(u64, u64)>),
}
