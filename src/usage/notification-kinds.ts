// Which of Claude Code's Notification hook types mean it waits for a person (issue 33). The
// types as 2.1.328 and 2.1.332 list them (the same list in both binaries): permission_prompt,
// idle_prompt, auth_success, elicitation_dialog, agent_needs_input, agent_completed,
// elicitation_url_dialog, worker_permission_prompt, push_notification, computer_use_enter,
// computer_use_exit, quota_auto_resume_fired, quota_auto_resume_stale,
// quota_auto_resume_disabled, model_refusal_fallback, auth_storage_failure, plugin_notification.
// Measured: auto mode behind a gateway sends `agent_needs_input` ("Auto mode can't check actions
// in this session and needs your choice"); a permission prompt sends `permission_prompt`
// ("Claude needs your permission").

/** The types that tell of something else than a prompt held for a person. */
const NOT_WAITING = new Set([
  // the turn ended: idle, which the activity verdict judges from the turn's end
  "idle_prompt",
  "auth_success",
  "agent_completed",
  "push_notification",
  "computer_use_enter",
  "computer_use_exit",
  "quota_auto_resume_fired",
  "quota_auto_resume_stale",
  "quota_auto_resume_disabled",
  "model_refusal_fallback",
  "auth_storage_failure",
  "plugin_notification",
]);

/**
 * Whether a Notification of this type waits for a person (`permission_prompt`,
 * `elicitation_dialog`, `agent_needs_input`, …). A type no tested version sends is taken to
 * wait: a page about it is better than silence.
 */
export function waitsForPerson(type: string | null): boolean {
  return type !== null && !NOT_WAITING.has(type);
}
