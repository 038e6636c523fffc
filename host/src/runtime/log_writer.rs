//! The log's writer: each line is appended to a buffer in memory, and a thread of its own writes
//! the buffer to standard error a batch at a time, so that a request pays for a copy and a lock,
//! not for a system call. Under load a batch holds hundreds of lines; idle, the thread sleeps
//! until a line comes.
//!
//! Nothing is lost while the process lives: a line waits at most [`GATHER`] before it is written,
//! a buffer past [`LIMIT`] is written by the request that filled it, and [`Flush`] writes what is
//! left when the service stops. A process killed outright loses what the last few milliseconds
//! wrote. Batches are written in the order they were taken, one at a time.

use std::io::{self, Write as _};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long the writer lets lines gather after the first of a batch.
pub const GATHER: Duration = Duration::from_millis(10);
/// The most the buffer holds before the request adding to it writes it out itself.
pub const LIMIT: usize = 1 << 22;

/// Where batches go: standard error, or what a test collects.
type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

struct Shared {
    sink: Sink,
    state: Mutex<State>,
    /// Signalled when the buffer gets its first line, and when the service stops.
    ready: Condvar,
    /// Held while a batch is written, so that batches reach the output in the order taken.
    writing: Mutex<()>,
}

#[derive(Default)]
struct State {
    buffer: Vec<u8>,
    stopping: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding a lock left whole bytes behind: keep logging.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Takes the buffered lines and writes them, in turn with any other batch.
    fn write_out(&self, output: &mut Vec<u8>) {
        let _turn = lock(&self.writing);
        std::mem::swap(&mut lock(&self.state).buffer, output);
        if !output.is_empty() {
            (self.sink)(output);
            output.clear();
        }
    }
}

/// Standard error, written in batches; hand it to the log as its writer.
#[derive(Clone)]
pub struct BatchedStderr {
    shared: Arc<Shared>,
}

/// Stops the writer when dropped, once everything buffered is written.
pub struct Flush {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl BatchedStderr {
    /// Starts the writing thread; keep the [`Flush`] until the service stops.
    pub fn start() -> io::Result<(Self, Flush)> {
        // Standard error closed or full: there is nowhere else to say so.
        Self::start_to(Box::new(|batch| drop(io::stderr().lock().write_all(batch))))
    }

    fn start_to(sink: Sink) -> io::Result<(Self, Flush)> {
        let shared =
            Arc::new(Shared { sink, state: Mutex::default(), ready: Condvar::new(), writing: Mutex::default() });
        let writer = shared.clone();
        let thread = std::thread::Builder::new().name("log-writer".into()).spawn(move || write_batches(&writer))?;
        Ok((Self { shared: shared.clone() }, Flush { shared, thread: Some(thread) }))
    }
}

fn write_batches(shared: &Shared) {
    let mut output = Vec::new();
    loop {
        {
            let mut state = lock(&shared.state);
            while state.buffer.is_empty() && !state.stopping {
                state = shared.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
            if state.stopping {
                break;
            }
        }
        std::thread::sleep(GATHER);
        shared.write_out(&mut output);
    }
    shared.write_out(&mut output);
}

impl Drop for Flush {
    fn drop(&mut self) {
        lock(&self.shared.state).stopping = true;
        self.shared.ready.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One line's writer: what it is given goes to the buffer.
pub struct Line<'a> {
    shared: &'a Shared,
}

impl io::Write for Line<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut state = lock(&self.shared.state);
        if state.stopping {
            // The writer is gone (the service is stopping): write directly.
            drop(state);
            let _turn = lock(&self.shared.writing);
            (self.shared.sink)(bytes);
            return Ok(bytes.len());
        }
        let first = state.buffer.is_empty();
        state.buffer.extend_from_slice(bytes);
        let full = state.buffer.len() >= LIMIT;
        drop(state);
        if full {
            self.shared.write_out(&mut Vec::new());
        } else if first {
            self.shared.ready.notify_one();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BatchedStderr {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line { shared: &self.shared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose batches are collected, with what it wrote.
    fn collected() -> (BatchedStderr, Flush, Arc<Mutex<Vec<Vec<u8>>>>) {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let into = batches.clone();
        let (writer, flush) = BatchedStderr::start_to(Box::new(move |batch| lock(&into).push(batch.to_vec()))).unwrap();
        (writer, flush, batches)
    }

    #[test]
    fn every_line_is_written_in_order_by_the_time_the_service_stops() {
        let (writer, flush, batches) = collected();
        let lines: Vec<String> = (0..1000).map(|n| format!("line {n}\n")).collect();
        for line in &lines {
            writer.make_writer().write_all(line.as_bytes()).unwrap();
        }
        drop(flush);
        let written = lock(&batches).clone();
        assert_eq!(written.concat(), lines.concat().into_bytes());
        assert!(written.len() < lines.len(), "lines are written in batches: {} batches", written.len());
        writer.make_writer().write_all(b"after\n").unwrap();
        assert_eq!(lock(&batches).last().map(Vec::as_slice), Some(&b"after\n"[..]), "written at once after the stop");
    }

    #[test]
    fn a_full_buffer_is_written_by_the_line_that_filled_it() {
        let (writer, _flush, batches) = collected();
        // Hold the buffer non-empty, as the writing thread would find it mid-batch, then fill it
        // past the limit in one line.
        lock(&writer.shared.state).buffer.push(b'a');
        writer.make_writer().write_all(&vec![b'x'; LIMIT]).unwrap();
        assert!(lock(&writer.shared.state).buffer.is_empty());
        let written = lock(&batches).concat();
        assert_eq!((written.len(), written[0]), (LIMIT + 1, b'a'), "the whole batch, in order");
    }
}
