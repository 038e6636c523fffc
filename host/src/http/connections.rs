//! The connections the service accepts. At most `max_connections` are open at once: past that the
//! service accepts no more until one closes, so a flood of connections cannot take the file
//! descriptors the database and the webhooks need. Two deadlines close a connection whose client
//! holds it without using it:
//!
//! - the **header-read timeout**: a request's head (its line and headers, up to the blank line)
//!   must arrive whole within this time of its first byte, and a new connection's first request
//!   within this time of connecting. A client that sends a head a byte at a time (slowloris), or
//!   connects and says nothing, is cut off;
//! - the **idle timeout**: after an answer, a kept-alive connection waits this long for the next
//!   request's first byte, then closes. An interim `100 Continue` is no answer: the body it asks
//!   for is read without a deadline, however long a large upload takes.
//!
//! The request's body and the time a handler takes are not bounded here (the body by its size
//! limit, handlers by their own timeouts). The deadlines are read on the service's clock, so that
//! a manual clock moves them as it moves everything else.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use chrono::{DateTime, TimeDelta, Utc};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::kernel::clock::{Clock, Sleep};
use crate::runtime::metrics::{InFlight, Metrics};

/// The bounds of [`Guarded`] connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read: TimeDelta,
    pub idle: TimeDelta,
    pub max_connections: usize,
}

/// A listener whose connections are bounded in number and closed when they hold still.
pub struct Guarded {
    listener: TcpListener,
    permits: Arc<Semaphore>,
    limits: Limits,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
}

impl Guarded {
    pub fn new(listener: TcpListener, limits: Limits, clock: Arc<dyn Clock>, metrics: Arc<Metrics>) -> Self {
        Self { listener, permits: Arc::new(Semaphore::new(limits.max_connections)), limits, clock, metrics }
    }
}

impl Listener for Guarded {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        // Waiting here leaves new connections in the kernel's queue until one of ours closes.
        let Ok(permit) = self.permits.clone().acquire_owned().await else {
            // The semaphore is never closed; were it, no connection could be served again.
            return std::future::pending().await;
        };
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let place = Place { _permit: permit, _counted: self.metrics.connection_opened() };
                    let stream =
                        GuardedStream::new(stream, place, self.limits, self.clock.clone(), self.metrics.clone());
                    return (stream, peer);
                }
                // Out of descriptors or a connection reset before it was taken: wait a moment
                // rather than spin (the way axum's own listener does).
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// The address a connection came from, as the router's connect info.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);

impl Connected<IncomingStream<'_, Guarded>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Guarded>) -> Self {
        Self(*stream.remote_addr())
    }
}

/// Where a connection stands, as its bytes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A request's head is arriving (or, on a new connection, expected): `newlines` line ends in a
    /// row so far, carriage returns aside; two end the head.
    Head { newlines: u8 },
    /// The head arrived: the body, the handler and the answer take what they take.
    Busy,
    /// An answer went out; the next request has not begun.
    Idle,
}

/// A connection's place among the open ones, given back when it is dropped.
struct Place {
    _permit: OwnedSemaphorePermit,
    _counted: InFlight,
}

/// A connection with its deadlines, holding its place among the open ones until it is dropped.
pub struct GuardedStream {
    stream: TcpStream,
    _place: Place,
    limits: Limits,
    clock: Arc<dyn Clock>,
    metrics: Arc<Metrics>,
    phase: Phase,
    /// When the current phase must end by, if it must.
    deadline: Option<DateTime<Utc>>,
    /// The wait for `deadline`, made when a read first has to wait.
    sleep: Option<(DateTime<Utc>, Sleep)>,
}

impl GuardedStream {
    fn new(stream: TcpStream, place: Place, limits: Limits, clock: Arc<dyn Clock>, metrics: Arc<Metrics>) -> Self {
        let deadline = Some(clock.now() + limits.header_read);
        let phase = Phase::Head { newlines: 0 };
        Self { stream, _place: place, limits, clock, metrics, phase, deadline, sleep: None }
    }

    /// Follows the bytes read: the first byte after an answer starts a head, a blank line ends it.
    fn read(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut newlines = match self.phase {
            Phase::Busy => return,
            Phase::Idle => {
                self.deadline = Some(self.clock.now() + self.limits.header_read);
                0
            }
            Phase::Head { newlines } => newlines,
        };
        for byte in bytes {
            match byte {
                b'\n' => newlines += 1,
                b'\r' => {}
                _ => newlines = 0,
            }
            if newlines == 2 {
                self.phase = Phase::Busy;
                self.deadline = None;
                return;
            }
        }
        self.phase = Phase::Head { newlines };
    }

    /// An answer (or part of one) went out: the connection is idle until the client speaks. The
    /// wait starts here, with the writing task's waker: the server may not read again before the
    /// client sends something, and the deadline must wake it all the same.
    fn wrote(&mut self, context: &mut Context<'_>, bytes: &[u8]) {
        // `100 Continue` asks for the body: the request goes on, and so does its body's reading.
        if bytes.starts_with(b"HTTP/1.1 1") {
            return;
        }
        self.phase = Phase::Idle;
        self.deadline = Some(self.clock.now() + self.limits.idle);
        let _ = self.expired(context);
    }

    /// Whether the current deadline has passed; when it has not, the task wakes when it does.
    fn expired(&mut self, context: &mut Context<'_>) -> bool {
        let Some(deadline) = self.deadline else { return false };
        if !matches!(&self.sleep, Some((at, _)) if *at == deadline) {
            self.sleep = Some((deadline, self.clock.sleep_until(deadline)));
        }
        match &mut self.sleep {
            Some((_, sleep)) => sleep.as_mut().poll(context).is_ready(),
            None => false,
        }
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(self: Pin<&mut Self>, context: &mut Context<'_>, buffer: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buffer.filled().len();
        match Pin::new(&mut this.stream).poll_read(context, buffer) {
            Poll::Ready(Ok(())) => {
                this.read(&buffer.filled()[before..]);
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.expired(context) => {
                let (reason, why) = match this.phase {
                    Phase::Idle => ("idle_timeout", "the connection stayed idle past its idle timeout"),
                    _ => ("header_timeout", "the request's head did not arrive within the header-read timeout"),
                };
                this.metrics.connection_cut(reason);
                // Counted once, however often the closing connection is read again.
                this.deadline = None;
                Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, why)))
            }
            other => other,
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(self: Pin<&mut Self>, context: &mut Context<'_>, bytes: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(context, bytes);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.wrote(context, bytes);
        }
        written
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(context, buffers);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            let first = buffers.iter().find(|buffer| !buffer.is_empty()).map_or(&[][..], |buffer| &buffer[..]);
            this.wrote(context, first);
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(context)
    }
}
