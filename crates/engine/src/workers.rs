//! Work spread over threads with results delivered in order: batch mode answers its nodes
//! with it, `diff` compares them with it. One design, so that both scale the same way and
//! both print the same bytes whatever the number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `work` on every item on up to `threads` worker threads (each with the lookup stack,
/// [`LOOKUP_STACK_SIZE`](hiera_value::limits::LOOKUP_STACK_SIZE)), and hands each result to
/// `deliver` with its index, in item order, as soon as it and every earlier one are done.
///
/// Workers take the next item as they finish one, so a slow item holds up no other worker;
/// a result that is ready before an earlier one waits for it. `deliver` runs under a lock
/// (never two at once), so the expensive part belongs in `work`. Items no worker thread
/// could be started for run on the calling thread (whose stack, like main's, is the lookup
/// stack).
pub fn in_order<I, T>(
    items: &[I],
    threads: usize,
    work: impl Fn(&I) -> T + Sync,
    deliver: impl FnMut(usize, T) + Send,
) where
    I: Sync,
    T: Send,
{
    let total = items.len();
    let next = AtomicUsize::new(0);
    // The first index not yet delivered, and the results waiting for it.
    let done: Mutex<Pending<T, _>> = Mutex::new(Pending {
        first: 0,
        waiting: (0..total).map(|_| None).collect(),
        deliver,
    });
    let run = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let result = work(item);
        done.lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(i, result);
    };
    let threads = threads.max(1).min(total.max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            let spawned = std::thread::Builder::new()
                .stack_size(hiera_value::limits::LOOKUP_STACK_SIZE)
                .spawn_scoped(s, run);
            if spawned.is_err() {
                // No thread to be had: the others (or the calling thread, below) carry on.
                break;
            }
        }
    });
    if next.load(Ordering::Relaxed) < total {
        run();
    }
}

/// Results that finished before an earlier one.
struct Pending<T, D> {
    first: usize,
    waiting: Vec<Option<T>>,
    deliver: D,
}

impl<T, D: FnMut(usize, T)> Pending<T, D> {
    fn put(&mut self, i: usize, result: T) {
        self.waiting[i] = Some(result);
        while let Some(r) = self.waiting.get_mut(self.first).and_then(Option::take) {
            (self.deliver)(self.first, r);
            self.first += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_arrive_in_order_whatever_the_threads() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [0, 1, 2, 7, 500] {
            let mut got = Vec::new();
            // Uneven work, so that later items often finish first.
            in_order(
                &items,
                threads,
                |&n| {
                    let spin = (n % 7) * 2000;
                    (0..spin).fold(n, |a, b| a.wrapping_add(b % 3))
                        - (0..spin).map(|b| b % 3).sum::<u64>()
                },
                |i, r| got.push((i, r)),
            );
            let expected: Vec<(usize, u64)> = items.iter().map(|&n| (n as usize, n)).collect();
            assert_eq!(got, expected, "{threads} threads");
        }
    }

    #[test]
    fn no_items_no_calls() {
        let mut calls = 0;
        in_order(&[] as &[u8], 4, |_| (), |_, _| calls += 1);
        assert_eq!(calls, 0);
    }
}
