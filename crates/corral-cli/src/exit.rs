//! One place maps every result to an exit status.

use std::process::ExitCode;

/// What a subcommand finished with.
pub enum Done {
    /// Exit with this status (the command's, or 0).
    Status(i32),
}

/// Exit statuses of corral's own failures.
pub const BAD_REQUEST: u8 = 2;
pub const CORRAL_FAILED: u8 = 125;

pub fn report(result: anyhow::Result<Done>) -> ExitCode {
    match result {
        Ok(Done::Status(code)) => ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(1)),
        Err(err) => {
            eprintln!("corral: {err:#}");
            let bad_request = err
                .downcast_ref::<corral::Error>()
                .is_some_and(|e| e.kind() == corral::ErrorKind::InvalidRequest);
            ExitCode::from(if bad_request {
                BAD_REQUEST
            } else {
                CORRAL_FAILED
            })
        }
    }
}
