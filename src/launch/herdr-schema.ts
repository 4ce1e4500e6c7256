// The parts of Herdr's answers the launcher reads, after Herdr's published API schema
// (ogulcancelik/herdr@10974c822d607f03e20e9741ec027910f0c1f93a, protocol 20) and its source at
// release v0.8.2 (herdrdev/herdr@1c76079f: `pane_process_info`, `agent_session`); 0.9's protocol
// 22 added methods but changed none of these records. Only the fields we use are required;
// anything else Herdr adds passes through.
import * as z from "zod/mini";

const id = () => z.string().check(z.minLength(1, { message: "a non-empty id" }));
const agentStatus = z.enum(["idle", "working", "blocked", "done", "unknown"], {
  message: "one of idle, working, blocked, done, unknown",
});

export const errorResponse = z.object({
  id: z.string(),
  error: z.object({ code: z.string(), message: z.string() }),
});

export const successResponse = z.object({ id: z.string(), result: z.unknown() });

const workspaceInfo = z.object({ workspace_id: id(), label: z.string() });
const tabInfo = z.object({ tab_id: id(), workspace_id: id() });
const paneInfo = z.object({ pane_id: id(), tab_id: id(), workspace_id: id() });

export const agentInfo = z.object({
  pane_id: id(),
  tab_id: id(),
  workspace_id: id(),
  agent_status: agentStatus,
  name: z.optional(z.nullable(z.string())),
  /** With Herdr's Claude integration: `{source: "herdr:claude", kind: "id", value: <uuid>}`. */
  agent_session: z.optional(
    z.nullable(z.object({ source: z.string(), kind: z.string(), value: z.string() })),
  ),
});

const processEntry = z.object({
  pid: z.number().check(z.int(), z.positive()),
  name: z.string(),
  argv0: z.optional(z.nullable(z.string())),
});

export const results = {
  workspaceList: z.object({
    type: z.literal("workspace_list"),
    workspaces: z.array(workspaceInfo),
  }),
  workspaceCreated: z.object({
    type: z.literal("workspace_created"),
    workspace: workspaceInfo,
    tab: tabInfo,
    root_pane: paneInfo,
  }),
  tabCreated: z.object({ type: z.literal("tab_created"), tab: tabInfo, root_pane: paneInfo }),
  agentList: z.object({ type: z.literal("agent_list"), agents: z.array(agentInfo) }),
  agentStarted: z.object({
    type: z.literal("agent_started"),
    agent: agentInfo,
    argv: z.array(z.string()),
  }),
  agentPrompted: z.object({ type: z.literal("agent_prompted"), agent: agentInfo }),
  agentInfo: z.object({ type: z.literal("agent_info"), agent: agentInfo }),
  /** `pane process-info`: AgentInfo has no pid; the pane's foreground job does. */
  paneProcessInfo: z.object({
    type: z.literal("pane_process_info"),
    process_info: z.object({
      pane_id: id(),
      shell_pid: z.optional(z.nullable(z.number())),
      foreground_process_group_id: z.optional(z.nullable(z.number())),
      foreground_processes: z.optional(z.array(processEntry)),
    }),
  }),
  paneInfo: z.object({ type: z.literal("pane_info"), pane: paneInfo }),
  any: z.object({ type: z.string() }),
};

export type AgentInfo = z.infer<typeof agentInfo>;
