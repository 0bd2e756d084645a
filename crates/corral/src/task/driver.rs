//! The loop: ask the model, run the tools it calls, and when it says it is done, run the
//! gate. Only the gate decides success; its failure is the model's next observation.
//!
//! 1. The model gets the goal, the workspace and the tools (corral's own, plus `done`).
//! 2. Each turn's tool calls run in order through [`tools::dispatch`]; a refusal or a bad
//!    request is an observation, not a failure of the run.
//! 3. `done`, or a turn with text and no tool call, asks for the gate. A pass ends the
//!    run verified; a failure is sent back and the loop goes on.
//! 4. The limits (turns, tokens, wall time) end the run unverified, and say which.
//!
//! Every turn is a `model_turns` row; every tool call a `steps` row; every gate phase a
//! `verify` step with its `sandbox_events`.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;

use corral_trace::NewModelTurn;

use super::contract::{TaskContract, Verification};
use super::model::{Message, Model, ModelError, ModelRequest, ModelResponse, ToolCall, Usage};
use super::tools::{self, DONE, DoneRequest, ToolResult};
use crate::cancel::Cancel;
use crate::error::Error;
use crate::run::Run;
use crate::verify::GateVerdict;

/// What a person watching a run is told, as it happens.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskEvent<'a> {
    /// The model answered.
    Turn {
        /// 1, 2, 3, …
        turn: usize,
        /// Its text, if any.
        text: Option<&'a str>,
        /// Its token usage.
        usage: &'a Usage,
    },
    /// A tool call is about to run.
    ToolStarted {
        /// The call.
        call: &'a ToolCall,
    },
    /// A tool call ended.
    ToolDone {
        /// The call.
        call: &'a ToolCall,
        /// What it produced.
        result: &'a ToolResult,
    },
    /// The gate is about to run.
    GateStarted,
    /// The gate ran.
    Gate {
        /// Its verdict.
        verdict: &'a GateVerdict,
    },
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "ending", rename_all = "snake_case")]
pub enum Ending {
    /// The gate passed.
    Verified,
    /// The model used every turn it had.
    StepLimit {
        /// The limit.
        max_steps: usize,
    },
    /// The tokens ran out.
    TokenLimit {
        /// The limit.
        max_tokens: u64,
    },
    /// The wall-clock time ran out.
    WallTime {
        /// The limit.
        #[serde(with = "humantime_serde")]
        limit: Duration,
    },
    /// The gate could not run at all: a phase was refused or not approved, its box
    /// cannot be enforced here, or its program is not installed. No turn of the model
    /// could change that, so the run ends at once.
    GateCouldNotRun {
        /// Why.
        reason: String,
    },
    /// The person interrupted the run (Ctrl-C, a service manager's SIGTERM): what was
    /// running was ended, and the gate's last verdict, if any, stands.
    Interrupted,
    /// The model's provider failed (after its retries).
    ModelFailed {
        /// Why.
        #[serde(serialize_with = "error_text")]
        error: ModelError,
    },
}

fn error_text<S: serde::Serializer>(e: &ModelError, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&e.message)
}

impl Ending {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Ending::Verified => "verified".into(),
            Ending::StepLimit { max_steps } => {
                format!("the step limit ({max_steps} model turns) was reached")
            }
            Ending::TokenLimit { max_tokens } => {
                format!("the token limit ({max_tokens}) was reached")
            }
            Ending::WallTime { limit } => format!(
                "the wall-time limit ({}) was reached",
                humantime::format_duration(*limit)
            ),
            Ending::GateCouldNotRun { reason } => format!("the gate could not run: {reason}"),
            Ending::Interrupted => "interrupted".into(),
            Ending::ModelFailed { error } => format!("the model failed: {error}"),
        }
    }
}

/// How a task run ended.
#[derive(Debug, Clone, Serialize)]
pub struct TaskOutcome {
    /// The run's id in the trace.
    pub run_id: String,
    /// The gate passed.
    pub verified: bool,
    /// Why it ended.
    #[serde(flatten)]
    pub ending: Ending,
    /// The last verdict of the gate, if it ran.
    pub verdict: Option<GateVerdict>,
    /// Model turns taken.
    pub turns: usize,
    /// Tokens (and cost) over all turns.
    pub usage: Usage,
    /// What the model said last.
    pub summary: Option<String>,
}

/// Why a task could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// corral could not do its part: a bad contract, a closed run, a trace it cannot write.
    #[error(transparent)]
    Corral(#[from] Error),
}

/// Drive `contract` to its end with `model` in the open `run`, telling `on_event` what
/// happens as it happens.
pub fn drive(
    run: &Run,
    contract: &TaskContract,
    model: &dyn Model,
    on_event: &mut dyn FnMut(TaskEvent<'_>),
) -> Result<TaskOutcome, TaskError> {
    drive_until(run, contract, model, None, on_event)
}

/// [`drive`], ended with [`Ending::Interrupted`] when `interrupt` fires: the tool call or
/// gate phase running then is ended (its step `cancelled`), and nothing more starts. A
/// model request in flight is not cut off; the run ends when it is answered, so a
/// caller that must end sooner (a person's Ctrl-C) drives on a thread of its own and
/// stops waiting for it.
pub fn drive_until(
    run: &Run,
    contract: &TaskContract,
    model: &dyn Model,
    interrupt: Option<&Cancel>,
    on_event: &mut dyn FnMut(TaskEvent<'_>),
) -> Result<TaskOutcome, TaskError> {
    let interrupted = || interrupt.is_some_and(Cancel::is_cancelled);
    if contract.verification.is_empty() {
        return Err(Error::invalid_request(
            "the contract has no verification gate: add one with with_verification(Verification::Command { argv, expect_exit: 0 }), \
             e.g. the project's test command",
        )
        .into());
    }
    let started = Instant::now();
    super::wall_clock::held(contract.limits.wall_time, started, interrupt, |ends_on| {
        let mut task = Task::new(run, contract, model, interrupt, ends_on);
        task.started = started;
        if let Some(reason) = missing_gate_program(run, contract) {
            return Ok(task.outcome(Ending::GateCouldNotRun { reason }));
        }
        let ending = loop {
            if interrupted() {
                break Ending::Interrupted;
            }
            if let Some(ending) = task.limit_reached() {
                break ending;
            }
            let response = match task.ask()? {
                Ok(response) => response,
                Err(error) => break Ending::ModelFailed { error },
            };
            if interrupted() {
                break Ending::Interrupted;
            }
            on_event(TaskEvent::Turn {
                turn: task.turn,
                text: response.text.as_deref(),
                usage: &response.usage,
            });
            let calls = task.take(&response);
            let done_call = task.call_tools(&calls, on_event)?;
            if interrupted() {
                break Ending::Interrupted;
            }
            if let Some(ending) = task.over_time() {
                break ending;
            }
            let Some(done_call) = done_call else {
                continue;
            };
            if task.gate(done_call, on_event)? {
                break Ending::Verified;
            }
            if interrupted() {
                break Ending::Interrupted;
            }
            if let Some(ending) = task.over_time() {
                break ending;
            }
            if let Some(reason) = task.gate_could_not_run() {
                break Ending::GateCouldNotRun { reason };
            }
        };
        Ok(task.outcome(ending))
    })
}

/// A gate phase whose program, named without a `/`, is on no directory of the run's
/// `PATH`: found before the first turn, so no model call is paid for a run that cannot
/// verify. (A path, `./test.sh`, may be written by the model during the run.)
fn missing_gate_program(run: &Run, contract: &TaskContract) -> Option<String> {
    let path_var = run
        .ctx
        .env
        .build(&Default::default())
        .ok()
        .and_then(|env| crate::env::path_of(&env).map(|p| p.into_owned()));
    contract.verification.iter().find_map(|phase| {
        let Verification::Command { argv, .. } = phase;
        let program = argv.first()?;
        if program.contains('/') {
            return None;
        }
        crate::resolve::program(program, path_var.as_deref(), run.workspace())
            .err()
            .map(|unavailable| {
                format!(
                    "phase `{}`: {} (install it, or give the gate with --verify)",
                    phase.describe(),
                    unavailable.reason
                )
            })
    })
}

/// A task being driven: the conversation so far, what it has cost, the gate's last word.
struct Task<'a> {
    run: &'a Run,
    contract: &'a TaskContract,
    model: &'a dyn Model,
    interrupt: Option<&'a Cancel>,
    /// What its tool calls and gate end on: `interrupt`, or with a wall time, a token
    /// that also fires at its end (see `wall_clock`).
    ends_on: Option<&'a Cancel>,
    started: Instant,
    request: ModelRequest,
    usage: Usage,
    verdict: Option<GateVerdict>,
    summary: Option<String>,
    /// How many of the request's messages the trace already holds.
    recorded: usize,
    turn: usize,
}

impl<'a> Task<'a> {
    fn new(
        run: &'a Run,
        contract: &'a TaskContract,
        model: &'a dyn Model,
        interrupt: Option<&'a Cancel>,
        ends_on: Option<&'a Cancel>,
    ) -> Self {
        let mut specs = tools::specs(run.host_lines());
        specs.push(tools::done_spec());
        let request = ModelRequest {
            system: system_prompt(run, contract),
            messages: vec![Message::User {
                content: contract.goal.clone(),
            }],
            tools: specs,
            max_tokens: 8192,
        };
        Task {
            run,
            contract,
            model,
            interrupt,
            ends_on,
            started: Instant::now(),
            request,
            usage: Usage::default(),
            verdict: None,
            summary: None,
            recorded: 0,
            turn: 0,
        }
    }

    /// The wall-time limit, once its time has run out (a call in flight was ended then).
    fn over_time(&self) -> Option<Ending> {
        let limit = self.contract.limits.wall_time?;
        (self.started.elapsed() >= limit).then_some(Ending::WallTime { limit })
    }

    /// The contract's limit this task has reached, if any.
    fn limit_reached(&self) -> Option<Ending> {
        let limits = self.contract.limits;
        if self.turn >= limits.max_steps {
            return Some(Ending::StepLimit {
                max_steps: limits.max_steps,
            });
        }
        if let Some(max) = limits.max_tokens
            && self.usage.input_tokens + self.usage.output_tokens >= max
        {
            return Some(Ending::TokenLimit { max_tokens: max });
        }
        if let Some(limit) = limits.wall_time
            && self.started.elapsed() >= limit
        {
            return Some(Ending::WallTime { limit });
        }
        None
    }

    /// One turn of the model, recorded; what it answered, counted into the usage.
    fn ask(&mut self) -> Result<Result<ModelResponse, ModelError>, TaskError> {
        self.turn += 1;
        let asked = Instant::now();
        let answer = self.model.complete(&self.request);
        record_turn(
            self.run,
            self.model,
            self.turn,
            &self.request,
            self.recorded,
            &answer,
            asked.elapsed(),
        )?;
        self.recorded = self.request.messages.len();
        if let Ok(response) = &answer {
            self.usage.input_tokens += response.usage.input_tokens;
            self.usage.output_tokens += response.usage.output_tokens;
            if let Some(cost) = response.usage.cost_usd {
                self.usage.cost_usd = Some(self.usage.cost_usd.unwrap_or(0.0) + cost);
            }
        }
        Ok(answer)
    }

    /// Keep the model's answer in the conversation (its text as the summary so far) and
    /// return its tool calls, each with an id.
    fn take(&mut self, response: &ModelResponse) -> Vec<ToolCall> {
        if response
            .text
            .as_deref()
            .is_some_and(|t| !t.trim().is_empty())
        {
            self.summary = response.text.clone();
        }
        let mut calls = response.tool_calls.clone();
        for (i, call) in calls.iter_mut().enumerate() {
            if call.id.is_empty() {
                call.id = format!("call_{}_{i}", self.turn);
            }
        }
        self.request.messages.push(Message::Assistant {
            content: response.text.clone(),
            tool_calls: calls.clone(),
        });
        calls
    }

    /// Run the tools the model called, their results added to the conversation. `Some`
    /// when the gate is to run next: the model called `done` (the call, to answer), or
    /// called nothing (`None` inside).
    fn call_tools<'c>(
        &mut self,
        calls: &'c [ToolCall],
        on_event: &mut dyn FnMut(TaskEvent<'_>),
    ) -> Result<Option<Option<&'c ToolCall>>, TaskError> {
        let mut asked_for_gate = calls.is_empty();
        let mut done_call = None;
        for call in calls {
            // A call not run is still answered, so the conversation stays well formed.
            let not_run = if self.interrupt.is_some_and(Cancel::is_cancelled) {
                Some("error: not run: the run was interrupted")
            } else if self.over_time().is_some() {
                Some("error: not run: the run's wall-time limit was reached")
            } else {
                None
            };
            if let Some(why) = not_run {
                self.request.messages.push(Message::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: why.into(),
                    is_error: true,
                });
                continue;
            }
            if call.name == DONE {
                if let Ok(done) = serde_json::from_value::<DoneRequest>(call.arguments.clone())
                    && done.summary.is_some()
                {
                    self.summary = done.summary;
                }
                asked_for_gate = true;
                done_call = Some(call);
                continue;
            }
            on_event(TaskEvent::ToolStarted { call });
            let result =
                tools::dispatch_until(self.run, &call.name, call.arguments.clone(), self.ends_on)?;
            on_event(TaskEvent::ToolDone {
                call,
                result: &result,
            });
            self.request.messages.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: result.text,
                is_error: result.is_error,
            });
        }
        Ok(asked_for_gate.then_some(done_call))
    }

    /// Run the verification gate; `true` when it passed. When it did not, the model is
    /// told why: as the answer to its `done` call, or as the next user message.
    fn gate(
        &mut self,
        done_call: Option<&ToolCall>,
        on_event: &mut dyn FnMut(TaskEvent<'_>),
    ) -> Result<bool, TaskError> {
        on_event(TaskEvent::GateStarted);
        let contract = self.contract;
        let gate = self.run.verify_approved(
            &contract.verification,
            &contract.gate_sandbox,
            contract.gate_timeout,
            contract.gate_approved_by.as_deref(),
            self.ends_on,
        )?;
        on_event(TaskEvent::Gate { verdict: &gate });
        let observation = gate.observation();
        let passed = gate.passed;
        self.verdict = Some(gate);
        if !passed {
            self.request.messages.push(match done_call {
                Some(call) => Message::Tool {
                    call_id: call.id.clone(),
                    name: DONE.into(),
                    content: observation,
                    is_error: true,
                },
                None => Message::User {
                    content: observation,
                },
            });
        }
        Ok(passed)
    }

    /// Why the last gate could not run at all, if a phase of it did not start.
    fn gate_could_not_run(&self) -> Option<String> {
        let failed = self.verdict.as_ref()?.failed()?;
        failed.status.is_none().then(|| {
            let why = failed.observation.trim_start_matches("error: ");
            format!("phase `{}`: {why}", failed.verification.describe())
        })
    }

    fn outcome(self, ending: Ending) -> TaskOutcome {
        TaskOutcome {
            run_id: self.run.id().to_string(),
            verified: ending == Ending::Verified,
            ending,
            verdict: self.verdict,
            turns: self.turn,
            usage: self.usage,
            summary: self.summary,
        }
    }
}

fn system_prompt(run: &Run, contract: &TaskContract) -> String {
    let gate: Vec<String> = contract
        .verification
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{}. `{}`", i + 1, v.describe()))
        .collect();
    format!(
        "You are working in the directory {workspace} to achieve the goal the user gives you.\n\
         Use the tools to look at files, change them (apply_patch for edits, write_file for new or \
         wholly rewritten files) and run commands. Commands run without a shell: exec takes an argv, \
         shell takes a line in a small grammar. Paths are relative to the workspace. A refused \
         call says why and what to do instead.\n\
         When you believe the goal is met, call `done` with a short summary. corral then runs the \
         verification gate, which alone decides whether the work is finished:\n{gate}\n\
         If the gate fails you are shown why; fix it and call `done` again.",
        workspace = run.workspace().display(),
        gate = gate.join("\n"),
    )
}

fn record_turn(
    run: &Run,
    model: &dyn Model,
    turn: usize,
    request: &ModelRequest,
    recorded: usize,
    answer: &Result<ModelResponse, ModelError>,
    took: Duration,
) -> Result<(), Error> {
    // The whole conversation would be written again every turn; each row keeps what is
    // new since the previous one (the system prompt and tool names on the first).
    let mut sent = json!({
        "messages_from": recorded,
        "messages": &request.messages[recorded.min(request.messages.len())..],
        "max_tokens": request.max_tokens,
    });
    if turn == 1 {
        sent["system"] = json!(request.system);
        sent["tools"] = json!(request.tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    }
    let (response_json, usage, error) = match answer {
        Ok(r) => (
            Some(if r.raw.is_null() {
                serde_json::to_string(r).unwrap_or_default()
            } else {
                r.raw.to_string()
            }),
            Some(r.usage),
            None,
        ),
        Err(e) => (None, None, Some(e.message.clone())),
    };
    run.ctx.store().record_model_turn(&NewModelTurn {
        run_id: run.id().to_string(),
        turn: turn as i64,
        at_ms: run.ctx.stamp(),
        duration_ms: took.as_millis() as i64,
        provider: model.provider().into(),
        model: model.model().into(),
        request_json: sent.to_string(),
        response_json,
        input_tokens: usage.map(|u| u.input_tokens),
        output_tokens: usage.map(|u| u.output_tokens),
        cost_usd: usage.and_then(|u| u.cost_usd),
        error,
    })?;
    Ok(())
}
