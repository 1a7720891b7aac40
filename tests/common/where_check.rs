//! The promise of `where`: the definition it says wins holds the value the real lookup
//! answers (first found), and the merge of the definitions it says contribute is the lookup's
//! answer (merges). Shared by the tests that check it on the fixtures and recorded trees.

use hiera_engine::merge::MergeStrategy;
use hiera_engine::where_::{Answer, Reporter, Request, Role};
use hiera_engine::{Outcome, Session};
use hiera_value::Value;

/// What was compared.
#[derive(Debug, Default)]
pub struct Checked {
    pub first: usize,
    pub merged: usize,
    pub not_found: usize,
    pub errors: usize,
}

/// Checks `where` for `key` in `session` against the lookup of `key` in `fresh` (another
/// session of the same node, which `where` never used).
pub fn check(
    reporter: &mut Reporter,
    session: &mut Session,
    fresh: &mut Session,
    key: &str,
    merge: Option<&MergeStrategy>,
    checked: &mut Checked,
) -> Result<(), String> {
    let request = Request {
        key: key.to_string(),
        merge: merge.cloned(),
        // Definitions the node does not reach play no part in the answer.
        reachable_only: true,
    };
    let want = fresh.lookup(&[key.to_string()], merge);
    let report = match reporter.report(session, &request, None) {
        Ok(r) => r,
        // A key or configuration the lookup refuses: `where` refuses it with the same error.
        Err(e) => match &want {
            Err(w) if w.to_string() == e.to_string() => {
                checked.errors += 1;
                return Ok(());
            }
            _ => {
                return Err(format!(
                    "{key}: where failed: {e}, the lookup gives {want:?}"
                ))
            }
        },
    };
    let same_answer = match (&want, &report.answer) {
        (Ok(Outcome::Found(a)), Answer::Found(b)) => a == b,
        (Ok(Outcome::NotFound), Answer::NotFound) => true,
        (Err(a), Answer::Error(b)) => a.to_string() == *b,
        _ => false,
    };
    if !same_answer {
        return Err(format!(
            "{key}: where answers {:?}, the lookup {want:?}",
            report.answer
        ));
    }
    let dotted = report.dotted();
    let converted = report
        .options
        .as_ref()
        .is_some_and(|o| matches!(o, Value::Hash(h) if h.contains_key(&Value::str("convert_to"))));
    let winners: Vec<_> = report
        .definitions
        .iter()
        .filter(|d| d.role == Role::Wins)
        .collect();
    let contributors: Vec<_> = report
        .definitions
        .iter()
        .filter(|d| matches!(d.role, Role::Contributes | Role::KnockedOut))
        .collect();
    let value = match &want {
        Ok(Outcome::Found(v)) => Some(v),
        Ok(Outcome::NotFound) => None,
        Err(_) => {
            checked.errors += 1;
            return Ok(());
        }
    };
    if report.merge.is_first() {
        if !contributors.is_empty() || winners.len() > 1 {
            return Err(format!(
                "{key}: first found with {} winners and {} contributors",
                winners.len(),
                contributors.len()
            ));
        }
        match value {
            Some(v) => {
                checked.first += 1;
                let Some(w) = winners.first() else {
                    return Err(format!("{key}: found {v:?} but no definition wins"));
                };
                if !w.complete || (!converted && w.value != *v) {
                    return Err(format!(
                        "{key}: the lookup answers {v:?}, the winner {}:{:?} holds {:?}",
                        w.file, w.pos, w.value
                    ));
                }
            }
            None => {
                checked.not_found += 1;
                if winners.iter().any(|w| w.complete) {
                    return Err(format!("{key}: not found, yet a complete definition wins"));
                }
            }
        }
        return Ok(());
    }
    if !winners.is_empty() {
        return Err(format!("{key}: a merge with a winner"));
    }
    let Some(v) = value else {
        checked.not_found += 1;
        if !contributors.is_empty() && !dotted {
            return Err(format!(
                "{key}: not found, yet {} definitions contribute",
                contributors.len()
            ));
        }
        return Ok(());
    };
    checked.merged += 1;
    if dotted || converted {
        return Ok(());
    }
    let mut memo: Option<Value> = None;
    if let [only] = contributors.as_slice() {
        // Found once: the location's merge_single, then the layers' convert_value.
        let single = report.merge.merge_single(only.value.clone());
        memo = Some(
            single
                .and_then(|v| report.merge.convert_value(v))
                .map_err(|e| e.message)?,
        );
    }
    let many = contributors.len() > 1;
    if many {
        // The contributors merged in order. A level of the lookup that merged several lookups
        // (a layer's hierarchy, an entry's locations) hands on its merge, which starts from
        // convert_value of its one value (`--merge unique` of hashes from two layers merges
        // their wrapped arrays): replayed that way when the plain replay fails or differs.
        let replay = |converted: bool| -> Result<Option<Value>, String> {
            let mut memo: Option<Value> = None;
            for c in &contributors {
                let mut x = c.value.clone();
                if converted {
                    x = report.merge.convert_value(x).map_err(|e| e.message)?;
                }
                memo = Some(match memo {
                    None => report.merge.convert_value(x).map_err(|e| e.message)?,
                    Some(m) => report.merge.merge(m, x).map_err(|e| e.message)?,
                });
            }
            Ok(memo)
        };
        memo = match replay(false) {
            Ok(m) if m.as_ref() == Some(v) => m,
            plain => match replay(true) {
                Ok(m) if m.as_ref() == Some(v) => m,
                _ => plain?,
            },
        };
    }
    if memo.as_ref() != Some(v) {
        return Err(format!(
            "{key}: the lookup merges to {v:?}, the contributors to {memo:?}"
        ));
    }
    Ok(())
}
