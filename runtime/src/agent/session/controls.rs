//! Commands that change how the session runs: the model and thinking level, queue and
//! interrupt modes, automatic compaction and retry, the session's name.

use super::answers::{ClearedQueues, CycledModel, ThinkingLevelChange};
use super::*;
use crate::agent::extensions::hooks::ModelSelectSource;

impl Session {
    /// Sets the thinking level, clamped; emits `thinking_level_changed` when it changed.
    pub(super) fn apply_thinking(&self, level: ThinkingLevel) -> ThinkingLevel {
        let (clamped, changed) = {
            let mut state = self.shared.state();
            let clamped = match &state.model {
                Some(model) => level.clamp(model),
                None => ThinkingLevel::Off,
            };
            let changed = state.thinking != clamped;
            state.thinking = clamped;
            if changed {
                state.record_thinking();
            }
            (clamped, changed)
        };
        if changed {
            self.shared
                .emit(&events::thinking_level_changed(clamped.as_str()));
        }
        clamped
    }

    /// pi's `model_select` to the extensions (`source`: set, cycle or restore).
    pub(super) fn model_selected(
        &self,
        model: &Model,
        previous: Option<Model>,
        source: crate::agent::extensions::hooks::ModelSelectSource,
    ) {
        use crate::agent::extensions::hooks::{Event, ModelSelectEvent};
        use crate::plugin_host::imports::models::model_info;
        // The same model again is no change (pi emits nothing for it).
        if previous
            .as_ref()
            .is_some_and(|p| p.provider == model.provider && p.id == model.id)
        {
            return;
        }
        self.shared.extensions.observe_typed("model_select", || {
            Event::ModelSelect(ModelSelectEvent {
                model: model_info(model),
                previous_model: previous.as_ref().map(model_info),
                source,
            })
        });
    }

    /// `set_model`: an available model by provider and id.
    pub fn set_model(&self, provider: &str, id: &str) -> Result<Model, SessionError> {
        let model = self
            .shared
            .models()
            .find_available(provider, id)
            .ok_or_else(|| SessionError::ModelNotFound {
                provider: provider.to_string(),
                id: id.to_string(),
            })?;
        let level = {
            let mut state = self.shared.state();
            let previous = state.model.replace(model.clone());
            self.model_selected(&model, previous, ModelSelectSource::Set);
            state.record_model();
            state
                .thinking_defaults
                .for_model(&model)
                .unwrap_or(state.thinking)
        };
        self.apply_thinking(level);
        Ok(model)
    }

    /// `cycle_model`: the next model (of the scoped ones whose provider has a key, else of the
    /// available ones), or `null` when there is at most one.
    pub fn cycle_model(&self) -> Option<CycledModel> {
        let scoped: Vec<(Model, Option<ThinkingLevel>)> = {
            let state = self.shared.state();
            state
                .scoped_models
                .iter()
                .filter(|(m, _)| self.shared.models().has_key(&m.provider))
                .cloned()
                .collect()
        };
        let is_scoped = !scoped.is_empty();
        let candidates: Vec<(Model, Option<ThinkingLevel>)> = if is_scoped {
            scoped
        } else {
            self.shared
                .models()
                .available()
                .into_iter()
                .map(|m| (m, None))
                .collect()
        };
        if candidates.len() <= 1 {
            return None;
        }
        let (current_index, previous_reasoning, level, defaults) = {
            let state = self.shared.state();
            let index = state
                .model
                .as_ref()
                .and_then(|m| {
                    candidates
                        .iter()
                        .position(|(c, _)| c.is(&m.provider, &m.id))
                })
                .unwrap_or(0);
            (
                index,
                state.model.as_ref().is_some_and(|m| m.reasoning),
                state.thinking,
                state.thinking_defaults.clone(),
            )
        };
        let (next, explicit) = candidates[(current_index + 1) % candidates.len()].clone();
        let raise = !previous_reasoning && self.shared.behaviour.raise_thinking_on_cycle;
        let wanted = explicit
            .or_else(|| defaults.for_model(&next))
            .unwrap_or(if raise { ThinkingLevel::Medium } else { level });
        {
            let mut state = self.shared.state();
            let previous = state.model.replace(next.clone());
            self.model_selected(&next, previous, ModelSelectSource::Cycle);
            state.record_model();
        }
        let level = self.apply_thinking(wanted);
        Some(CycledModel {
            model: next,
            thinking_level: level,
            is_scoped,
        })
    }

    /// `set_thinking_level`.
    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        self.apply_thinking(level);
    }

    /// `cycle_thinking_level`: `{"level"}`, or `null` for a non-reasoning model.
    pub fn cycle_thinking_level(&self) -> Option<ThinkingLevelChange> {
        let (available, current) = {
            let state = self.shared.state();
            match &state.model {
                Some(model) if model.reasoning => (ThinkingLevel::available(model), state.thinking),
                _ => return None,
            }
        };
        let index = available
            .iter()
            .position(|l| *l == current)
            .map_or(0, |i| (i + 1) % available.len());
        let level = self.apply_thinking(available[index]);
        Some(ThinkingLevelChange { level })
    }

    /// `set_steering_mode`.
    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.shared.state().steering.mode = mode;
    }

    /// `set_follow_up_mode`.
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.shared.state().follow_up.mode = mode;
    }

    /// `set_interrupt_mode`.
    pub fn set_interrupt_mode(&self, mode: InterruptMode) {
        self.shared.state().interrupt_mode = mode;
    }

    /// `set_auto_compaction`.
    pub fn set_auto_compaction(&self, enabled: bool) {
        self.shared.state().auto_compaction = enabled;
    }

    /// `set_auto_retry`.
    pub fn set_auto_retry(&self, enabled: bool) {
        self.shared.state().auto_retry = enabled;
    }

    /// `abort_retry`: cancels the wait before a retry, if one is pending.
    pub fn abort_retry(&self) {
        if let Some(wait) = self.shared.state().retry_wait.clone() {
            wait.cancel();
        }
    }

    /// `set_session_name`: refuses an empty name; emits `session_info_changed`.
    pub fn set_session_name(&self, name: &str) -> Result<(), SessionError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(SessionError::EmptySessionName);
        }
        {
            let mut state = self.shared.state();
            state.session_name = Some(name.to_string());
            if let Value::Object(fields) = json!({"name": name}) {
                state.store.append("session_info", fields);
            }
        }
        self.shared.emit(&events::session_info_changed(name));
        Ok(())
    }

    /// `clear_queue` (pi 1.5): empties both queues; returns the texts removed,
    /// `{steering, followUp}`, and emits `queue_update` (even when they were empty).
    pub fn clear_queue(&self) -> ClearedQueues {
        let (steering, follow_up) = {
            let mut state = self.shared.state();
            (state.steering.drain(), state.follow_up.drain())
        };
        self.shared.emit_queue_update();
        let texts =
            |items: Vec<Queued>| -> Vec<String> { items.into_iter().map(|q| q.text).collect() };
        ClearedQueues {
            steering: texts(steering),
            follow_up: texts(follow_up),
        }
    }
}
