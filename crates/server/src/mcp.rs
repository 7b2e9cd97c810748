//! MCP over stdio: tools/list from the registry, tools/call through the
//! engine, each call under a budget tied to the request's cancellation.
//!
//! Tool failures are results with `isError: true`, text
//! `"<code>: <what happened>. <what to do next>"` and
//! `structuredContent.error = {code, message}`, so the model reads them and
//! the server keeps serving.

use std::borrow::Cow;
use std::sync::Arc;

use engine::{tools, ActionError, ActionOutput, Engine};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

/// Guidance sent once at initialize; kept short (it is paid per session).
const INSTRUCTIONS: &str = "Drive a real Chromium. Typical loop: browser_navigate, browser_snapshot (gives refs like e12), then act on refs with browser_click / browser_type. Refs go stale after a navigation: take a new snapshot. Errors start with a code and say what to do next.";

#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
}

impl McpServer {
    pub fn new(engine: Arc<Engine>) -> McpServer {
        McpServer { engine }
    }

    /// The tools as MCP advertises them, built from the shared registry.
    pub fn tool_list() -> Vec<Tool> {
        tools::tools()
            .iter()
            .map(|spec| Tool::new(spec.name, spec.description, Arc::new(spec.input_schema())))
            .collect()
    }

    /// Runs one tool call; never fails at the protocol level.
    pub async fn call(
        &self,
        name: &str,
        arguments: Value,
        cancel: tokio_util::sync::CancellationToken,
    ) -> CallToolResult {
        let started = std::time::Instant::now();
        let outcome = match tools::find(name) {
            None => Err(ActionError::invalid(
                format!("there is no tool named {name:?}"),
                format!(
                    "Use one of: {}.",
                    tools::tools()
                        .iter()
                        .map(|t| t.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            Some(spec) => match spec.parse(arguments) {
                Err(e) => Err(e),
                Ok(action) => {
                    let budget = self.engine.budget_for(&action, cancel);
                    self.engine.perform(&action, &budget).await
                }
            },
        };
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match outcome {
            Ok(output) => {
                tracing::info!(tool = name, elapsed_ms, "ok");
                success(output)
            }
            Err(error) => {
                tracing::info!(tool = name, elapsed_ms, code = error.code.as_str(), "error");
                failure(&error)
            }
        }
    }

    /// Serves MCP on stdin/stdout until the client closes stdin.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("MCP initialize failed: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| format!("MCP service stopped: {e}"))?;
        Ok(())
    }
}

fn success(output: ActionOutput) -> CallToolResult {
    let mut content = vec![ContentBlock::text(output.text)];
    if let Some(image) = output.image {
        content.push(ContentBlock::image(image.base64, image.mime_type));
    }
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(output.data);
    result
}

fn failure(error: &ActionError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
    result.structured_content = Some(json!({
        "error": { "code": error.code.as_str(), "message": format!("{}. {}", error.message, error.next_step) }
    }));
    result
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("cdpilot", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let name: Cow<'_, str> = request.name;
        Ok(self.call(&name, arguments, context.ct).await.into())
    }
}
