//! Work spread over threads with results delivered in order: batch mode answers its nodes
//! with it, `diff` compares them with it. One design, so that both scale the same way and
//! both print the same bytes whatever the number of threads.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// How many items a worker may be ahead of the first result not yet delivered, per worker:
/// results that wait for an earlier one (and the items being worked on) stay in proportion
/// to the workers, whatever the number of items.
const AHEAD_PER_WORKER: usize = 4;

/// Runs `work` on every item of `items` on up to `threads` worker threads (each with the
/// lookup stack, [`LOOKUP_STACK_SIZE`](hiera_value::limits::LOOKUP_STACK_SIZE)), and hands
/// each result to `deliver` with its index, in item order, as soon as it and every earlier
/// one are done.
///
/// Items are taken from the iterator as workers need them (a worker takes the next as it
/// finishes one, so a slow item holds up no other worker) and moved into `work`: nothing
/// is held for the whole list. A result that is ready before an earlier one waits for it;
/// workers stay within a few items per worker of the first result not yet delivered, so
/// that memory follows the workers, not the items. `deliver` runs under a lock (never two
/// at once), so the expensive part belongs in `work`; when it returns `Break` (its reader
/// left), no worker takes another item and no further result is delivered. Items no worker
/// thread could be started for run on the calling thread (whose stack, like main's, is the
/// lookup stack).
pub fn in_order<I, T>(
    items: impl IntoIterator<Item = I, IntoIter: Send>,
    threads: usize,
    work: impl Fn(I) -> T + Sync,
    deliver: impl FnMut(usize, T) -> ControlFlow<()> + Send,
) where
    I: Send,
    T: Send,
{
    in_order_with(items, threads, || (), |(), item| work(item), deliver);
}

/// [`in_order`] with state of each worker's own, made by `init` when the worker takes its
/// first item and lent to `work` for every item it takes (a `where` reporter's directory
/// listings, which every node of one question shares; a part of an index each worker folds
/// its items into). Returns the states of the workers that took an item.
pub fn in_order_with<I, S, T>(
    items: impl IntoIterator<Item = I, IntoIter: Send>,
    threads: usize,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, I) -> T + Sync,
    deliver: impl FnMut(usize, T) -> ControlFlow<()> + Send,
) -> Vec<S>
where
    I: Send,
    S: Send,
    T: Send,
{
    let threads = threads.max(1);
    let ahead = threads.saturating_mul(AHEAD_PER_WORKER);
    // The next item and its index.
    let source = Mutex::new((items.into_iter().fuse(), 0usize));
    let stop = AtomicBool::new(false);
    // The first index not yet delivered, and the results waiting for it.
    let done: Mutex<Pending<T, _>> = Mutex::new(Pending {
        first: 0,
        waiting: VecDeque::new(),
        deliver,
    });
    let advanced = Condvar::new();
    let states = Mutex::new(Vec::new());
    let run = || {
        let mut state = None;
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let (i, item) = {
                let mut src = source.lock().unwrap_or_else(|e| e.into_inner());
                let Some(item) = src.0.next() else { break };
                src.1 += 1;
                (src.1 - 1, item)
            };
            // Not too far ahead of the first result not yet delivered (which some worker is
            // working on: items are taken in order).
            {
                let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
                while i >= d.first + ahead && !stop.load(Ordering::Relaxed) {
                    d = advanced.wait(d).unwrap_or_else(|e| e.into_inner());
                }
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let result = work(state.get_or_insert_with(&init), item);
            let mut d = done.lock().unwrap_or_else(|e| e.into_inner());
            let before = d.first;
            if d.put(i, result).is_break() {
                stop.store(true, Ordering::Relaxed);
            }
            if d.first != before || stop.load(Ordering::Relaxed) {
                advanced.notify_all();
            }
        }
        if let Some(state) = state {
            states.lock().unwrap_or_else(|e| e.into_inner()).push(state);
        }
    };
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
    // What no worker took (none could be started): on this thread.
    run();
    states.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Results that finished before an earlier one.
struct Pending<T, D> {
    first: usize,
    /// The results of `first`, `first + 1` …, those not done yet `None`.
    waiting: VecDeque<Option<T>>,
    deliver: D,
}

impl<T, D: FnMut(usize, T) -> ControlFlow<()>> Pending<T, D> {
    fn put(&mut self, i: usize, result: T) -> ControlFlow<()> {
        let at = i - self.first;
        if self.waiting.len() <= at {
            self.waiting.resize_with(at + 1, || None);
        }
        self.waiting[at] = Some(result);
        while let Some(r) = self.waiting.front_mut().and_then(Option::take) {
            self.waiting.pop_front();
            let i = self.first;
            self.first += 1;
            (self.deliver)(i, r)?;
        }
        ControlFlow::Continue(())
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
                |&n: &u64| {
                    let spin = (n % 7) * 2000;
                    (0..spin).fold(n, |a, b| a.wrapping_add(b % 3))
                        - (0..spin).map(|b| b % 3).sum::<u64>()
                },
                |i, r| {
                    got.push((i, r));
                    ControlFlow::Continue(())
                },
            );
            let expected: Vec<(usize, u64)> = items.iter().map(|&n| (n as usize, n)).collect();
            assert_eq!(got, expected, "{threads} threads");
        }
    }

    /// Each worker's state is made once, when it starts, and lent to every item it takes.
    #[test]
    fn each_worker_keeps_its_own_state() {
        let made = std::sync::atomic::AtomicUsize::new(0);
        let mut got = Vec::new();
        let states = in_order_with(
            0..100u32,
            3,
            // A worker's number, and how many items it took.
            || (made.fetch_add(1, Ordering::SeqCst), 0u32),
            |(worker, taken): &mut (usize, u32), n| {
                *taken += 1;
                (n, *worker, *taken)
            },
            |_, r| {
                got.push(r);
                ControlFlow::Continue(())
            },
        );
        let made = made.load(Ordering::SeqCst);
        assert!((1..=4).contains(&made), "{made}");
        // The states come back, one a worker that took an item.
        assert_eq!(states.len(), made);
        assert_eq!(states.iter().map(|s| s.1).sum::<u32>(), 100);
        assert_eq!(
            got.iter().map(|r| r.0).collect::<Vec<_>>(),
            (0..100).collect::<Vec<_>>()
        );
        // Each worker counted the items it took, from 1 up: the last counts add up to all.
        let mut last = vec![0u32; made];
        for &(_, worker, taken) in &got {
            assert_eq!(taken, last[worker] + 1, "worker {worker}");
            last[worker] = taken;
        }
        assert_eq!(last.iter().sum::<u32>(), 100);
    }

    #[test]
    fn no_items_no_calls() {
        let mut calls = 0;
        in_order(
            &[] as &[u8],
            4,
            |_| (),
            |_, _| {
                calls += 1;
                ControlFlow::Continue(())
            },
        );
        assert_eq!(calls, 0);
    }

    #[test]
    fn a_break_stops_the_workers() {
        // Items are taken lazily: after the break, no worker takes another (a few in
        // progress may finish, and are not delivered).
        let taken = std::sync::atomic::AtomicUsize::new(0);
        let items = (0..100_000u64).inspect(|_| {
            taken.fetch_add(1, Ordering::Relaxed);
        });
        let mut got = Vec::new();
        in_order(
            items,
            4,
            |n| n,
            |i, n| {
                got.push((i, n));
                if i == 9 {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(got, (0..10).map(|n| (n as usize, n)).collect::<Vec<_>>());
        assert!(
            taken.load(Ordering::Relaxed) < 100,
            "{}",
            taken.load(Ordering::Relaxed)
        );
    }

    #[test]
    fn workers_stay_close_to_the_first_undelivered_result() {
        // The first item is slow: the others may not run more than a few items per worker
        // ahead of it.
        let threads = 3;
        let max_ahead = std::sync::atomic::AtomicUsize::new(0);
        let first_done = AtomicBool::new(false);
        in_order(
            0..500usize,
            threads,
            |n| {
                if n == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    first_done.store(true, Ordering::SeqCst);
                } else if !first_done.load(Ordering::SeqCst) {
                    max_ahead.fetch_max(n, Ordering::SeqCst);
                }
                n
            },
            |_, _| ControlFlow::Continue(()),
        );
        let ahead = max_ahead.load(Ordering::SeqCst);
        assert!(ahead < threads * AHEAD_PER_WORKER, "{ahead}");
    }
}
