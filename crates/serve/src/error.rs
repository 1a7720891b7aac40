//! Why a view has no document, and the status it answers with.

/// Why a view has no document.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewError {
    /// No such node, file or page (404).
    NotFound(String),
    /// The request itself is wrong (400).
    BadRequest(String),
    /// The server could not answer (500).
    Failed(String),
}

impl ViewError {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            ViewError::NotFound(m) | ViewError::BadRequest(m) | ViewError::Failed(m) => m,
        }
    }
}
