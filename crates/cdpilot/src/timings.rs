//! `CDPILOT_TIMINGS=<file>`: writes every step the engine times
//! (`engine::timing`) to `file`, one JSON line each: `{"step": …, "ms": …}`
//! plus the step's other fields. The bench reads it to print where a
//! snapshot's, a click's and the launch's milliseconds go.

use std::fs::File;
use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The layer that writes the timings.
pub struct Timings {
    out: Mutex<File>,
}

impl Timings {
    /// Appends to `path` (created if missing, 0600: its lines name URLs).
    pub fn to(path: &str) -> std::io::Result<Timings> {
        use std::os::unix::fs::OpenOptionsExt;
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(Timings { out: Mutex::new(out) })
    }

    fn write(&self, fields: Map<String, Value>) {
        let mut line = Value::Object(fields).to_string();
        line.push('\n');
        // One write per line: a reader never sees half a line.
        let _ = self.out.lock().unwrap().write_all(line.as_bytes());
    }
}

/// When a step began, and its fields.
struct Began {
    at: Instant,
    fields: Map<String, Value>,
}

#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}").into());
    }
}

impl<S> tracing_subscriber::Layer<S> for Timings
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Began {
                at: Instant::now(),
                fields: fields.0,
            });
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some(began) = span.extensions_mut().remove::<Began>() else {
            return;
        };
        let mut fields = began.fields;
        fields.insert("ms".into(), (began.at.elapsed().as_secs_f64() * 1000.0).into());
        self.write(fields);
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        fields.0.remove("message");
        self.write(fields.0);
    }
}
