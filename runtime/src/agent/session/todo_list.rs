//! The todo list: `set_todos`, and replacing the list (with its auto-clear).

use super::answers::TodoList;
use super::*;

impl Session {
    /// `set_todos`: replaces the todo list with `phases` (normalised); `{"todoPhases"}`.
    pub fn set_todos(&self, phases: &Value) -> Result<TodoList, SessionError> {
        let phases = todos::normalize(phases)?;
        self.shared.set_todo_list(phases.clone());
        Ok(TodoList {
            todo_phases: phases,
        })
    }
}

impl Shared {
    /// Replaces the todo list; a list with everything done is cleared after the session's
    /// delay, with `todo_auto_clear`, unless it changes in the meantime.
    pub fn set_todo_list(self: &Arc<Self>, phases: Vec<TodoPhase>) {
        let shared = self;
        let done = todos::all_done(&phases);
        let generation = {
            let mut state = shared.state();
            state.todos = phases;
            state.todo_generation += 1;
            state.todo_generation
        };
        if done {
            let shared = Arc::downgrade(shared);
            let delay = match shared.upgrade() {
                Some(shared) => shared.todo_clear_delay,
                None => return,
            };
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                {
                    let mut state = shared.state();
                    if state.todo_generation != generation {
                        return;
                    }
                    state.todos.clear();
                    state.todo_generation += 1;
                }
                shared.emit(&SessionEvent::TodoAutoClear);
            });
        }
    }
}
