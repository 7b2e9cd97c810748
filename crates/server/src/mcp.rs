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
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

/// The metrics resource.
pub const METRICS_URI: &str = "cdpilot://metrics";

/// Guidance sent once at initialize; kept short (it is paid per session).
const INSTRUCTIONS: &str = "Drive a real Chromium. Typical loop: browser_navigate, browser_snapshot (gives refs like e12), then act on refs with browser_click / browser_type. Refs go stale after a navigation: take a new snapshot. Every tool takes timeout_ms, the budget in ms of the whole call (default 25000; evaluate 10000; wait 30000). Errors start with a code and say what to do next.";

#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
}

impl McpServer {
    pub fn new(engine: Arc<Engine>) -> McpServer {
        McpServer { engine }
    }

    /// The tools as MCP advertises them, built from the shared registry
    /// (only those the configuration turns on).
    pub fn tool_list(&self) -> Vec<Tool> {
        tools::offered(self.engine.config())
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
        let outcome = engine::dispatch::call(self.engine.session(), name, arguments, cancel).await;
        match outcome {
            Ok(output) => success(output),
            Err(error) => failure(&error),
        }
    }

    /// Serves MCP on stdin/stdout until the client closes stdin. Lines are
    /// read by [`crate::stdio`], which answers those rmcp could not decode.
    pub async fn serve_stdio(self) -> Result<(), String> {
        let running = self
            .serve(crate::stdio::stdio())
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
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        let mut info = InitializeResult::new(capabilities);
        info.server_info = Implementation::new("cdpilot", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_list()))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let metrics = Resource::new(METRICS_URI, "metrics")
            .with_description("Counts and duration histograms of tool calls, timeouts, cancellations, terminated scripts, browser restarts (JSON).");
        let mut metrics = metrics;
        metrics.mime_type = Some("application/json".into());
        Ok(ListResourcesResult::with_all_items(vec![metrics]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != METRICS_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}; the only one is {METRICS_URI}", request.uri),
                None,
            ));
        }
        let json = self.engine.metrics().to_json().to_string();
        let mut contents = ResourceContents::text(json, METRICS_URI);
        if let ResourceContents::TextResourceContents { mime_type, .. } = &mut contents {
            *mime_type = Some("application/json".into());
        }
        Ok(ReadResourceResult::new(vec![contents]).into())
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
