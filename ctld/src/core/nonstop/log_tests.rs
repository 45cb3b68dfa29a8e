//! `nonstop.conf`'s `Debug`: each value logs one more kind of note at info level.

use super::*;
use crate::core::{Caller, NodeUpdate, SubmitRequest, on_node_update};
use crate::testkit::ClusterBuilder;
use std::sync::{Arc, Mutex};
use tracing::Level;
use tracing::field::{Field, Visit};

/// The failure-management notes logged while it is the default subscriber: level and text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() != "sluice::nonstop" {
            return;
        }
        let mut m = Message(String::new());
        event.record(&mut m);
        if let Ok(mut notes) = self.0.lock() {
            notes.push((*event.metadata().level(), m.0));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The level of the first note containing `text`.
fn level_of_note(notes: &[(Level, String)], text: &str) -> Level {
    notes
        .iter()
        .find(|(_, m)| m.contains(text))
        .map(|(l, _)| *l)
        .unwrap_or_else(|| panic!("no note with {text:?} in {notes:?}"))
}

/// A node of a `--no-kill` job fails and is replaced by the spare, under `Debug=debug`: the
/// levels of the health note, the replacement and the spare pool's change.
fn levels_with(debug: u8) -> [Level; 3] {
    let capture = Capture::default();
    let notes = capture.0.clone();
    tracing::subscriber::with_default(capture, || {
        let mut fx = ClusterBuilder::new()
            .nodes("n[1-4]", "CPUs=2")
            .partition("batch", "Nodes=n[1-4] Default=YES")
            .nonstop(&format!("HotSpareCount=batch:1\nDebug={debug}\n"))
            .build();
        fx.register_all();
        let id = fx.submit_and_schedule(SubmitRequest::new(1000, "steps").nodes(2).no_kill());
        let down = NodeUpdate::Down {
            reason: "test".into(),
        };
        on_node_update(
            &mut fx.core,
            &mut fx.out,
            fx.now,
            Caller::admin(),
            "n2",
            down,
        )
        .unwrap();
        on_replace_node(
            &mut fx.core,
            &mut fx.out,
            fx.now,
            Caller::user(1000),
            id,
            "n2",
        )
        .unwrap();
    });
    let notes = notes.lock().map(|n| n.clone()).unwrap_or_default();
    [
        level_of_note(&notes, "node n2 Failed"),
        level_of_note(&notes, "node n2 replaced by n4"),
        level_of_note(&notes, "hot spares now"),
    ]
}

#[test]
fn each_debug_value_logs_one_more_kind_of_note_at_info() {
    use Level as L;
    assert_eq!(levels_with(0), [L::DEBUG, L::DEBUG, L::TRACE]);
    assert_eq!(levels_with(1), [L::DEBUG, L::INFO, L::TRACE]);
    assert_eq!(levels_with(2), [L::INFO, L::INFO, L::TRACE]);
    assert_eq!(levels_with(3), [L::INFO, L::INFO, L::INFO]);
    assert_eq!(levels_with(9), [L::INFO, L::INFO, L::INFO]);
}
