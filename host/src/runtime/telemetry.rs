//! The log and traces. The log goes to standard error, filtered by `CASTELLAN_LOG`, as text or one
//! JSON object per line (`log_format`), written in batches by a thread of its own (`log_writer`);
//! text is coloured only when standard error is a terminal, so a file or a pipe never holds escape
//! codes.
//!
//! Traces go over OTLP. With `otlp_endpoint` set, the span of every request (holding its request
//! id) and the spans inside it are exported in batches to an OpenTelemetry collector over
//! OTLP/HTTP with protobuf bodies. Off by default: without an endpoint nothing is built.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use std::io::IsTerminal as _;

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

use super::log_writer::{BatchedStderr, Flush};
use crate::kernel::config::{LogFormat, Settings};

/// The log's writer and the traces exporter, kept until the service stops: dropping it writes the
/// lines still buffered and sends the spans still held.
pub struct Logging {
    // Dropped in this order: the spans' exporter may still log.
    _traces: Option<Traces>,
    _log: Flush,
}

/// Sets up the log on standard error and, when an OTLP endpoint is set, the traces exporter.
pub fn init_logging(settings: &Settings) -> anyhow::Result<Logging> {
    let filter = EnvFilter::try_from_env("CASTELLAN_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    let (writer, flush) = BatchedStderr::start()?;
    let log = tracing_subscriber::fmt::layer().with_writer(writer).with_ansi(std::io::stderr().is_terminal());
    let log = match settings.log_format {
        LogFormat::Json => log.json().boxed(),
        LogFormat::Text => log.boxed(),
    };
    let traces = settings.otlp_endpoint.as_deref().map(Traces::export_to).transpose()?;
    let exported = traces.as_ref().map(Traces::layer);
    tracing_subscriber::registry().with(filter).with(log).with(exported).try_init()?;
    Ok(Logging { _traces: traces, _log: flush })
}

/// The path of the traces service under a collector's base address.
const TRACES_PATH: &str = "/v1/traces";

/// An exporter of traces; what it still holds is sent when it is dropped.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// Exports to the collector at `endpoint`, its base address (`http://collector:4318`).
    pub fn export_to(endpoint: &str) -> anyhow::Result<Self> {
        // The exporter's client may speak TLS (an https collector), with the service's crypto.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let url = format!("{}{TRACES_PATH}", endpoint.trim_end_matches('/'));
        let exporter = SpanExporter::builder().with_http().with_endpoint(url).build()?;
        let resource = Resource::builder().with_service_name("castellan").build();
        let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
        Ok(Self { provider })
    }

    /// The `tracing` layer that turns the service's spans into spans of this exporter.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer().with_tracer(self.provider.tracer("castellan"))
    }

    /// Sends every finished span now. It blocks until the collector answered: call it off the
    /// async runtime's threads.
    pub fn flush(&self) -> anyhow::Result<()> {
        Ok(self.provider.force_flush()?)
    }
}

impl Drop for Traces {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "the trace exporter did not shut down cleanly");
        }
    }
}
