//! `INSERT … RETURNING`, run to its end.
//!
//! `Statement::query_row` takes the first row and resets the statement. Outside a
//! transaction SQLite commits when the statement ends, and an error there (a full disk:
//! `SQLITE_FULL` as the log is appended) is returned by that last step, which a reset
//! drops: the caller got an id for a row that was never kept. A step numbered that way
//! was run unrecorded, and the next step got the same number (issue 60). These inserts
//! step until the statement is done, so a commit that fails is an error.

use rusqlite::{Params, Row, Statement};

pub(crate) trait InsertRow {
    /// The one row an `INSERT … RETURNING` gives, once its commit (outside a transaction)
    /// is made.
    fn insert_row<T, P: Params>(
        &mut self,
        params: P,
        f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl InsertRow for Statement<'_> {
    fn insert_row<T, P: Params>(
        &mut self,
        params: P,
        f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        let mut rows = self.query(params)?;
        let value = match rows.next()? {
            Some(row) => f(row)?,
            None => return Err(rusqlite::Error::QueryReturnedNoRows),
        };
        // The last step ends the statement, and with it the implicit transaction.
        while rows.next()?.is_some() {}
        Ok(value)
    }
}
