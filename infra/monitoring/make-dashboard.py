#!/usr/bin/env python3
"""Writes k8s/monitoring/grafana-dashboard.json (Drael's Grafana dashboard). Edit the panels here and
rerun `python3 infra/monitoring/make-dashboard.py`; the dashboard test checks every metric it names exists."""
import json, os

rows = [
  ("Gateway: golden signals", [
    ("Requests/s by route and status class", 'sum by (route, status_class) (rate(drael_gateway_http_request_duration_seconds_count[5m]))', "reqps"),
    ("5xx ratio (SLO 99.5 %)", 'drael:gateway_http_errors:ratio_rate5m', "percentunit"),
    ("Latency p95 by mode", 'histogram_quantile(0.95, sum by (le, mode) (rate(drael_gateway_http_request_duration_seconds_bucket[5m])))', "s"),
    ("Open streams by mode", 'sum by (mode) (drael_gateway_open_streams)', "short"),
    ("Rate-limit refusals/s", 'sum(rate(drael_gateway_rate_limit_refusals_total[5m]))', "reqps"),
    ("Rate limits decided without Redis/s by policy", 'sum by (policy) (rate(drael_gateway_rate_limit_redis_down_decisions_total[5m]))', "reqps"),
    ("Event-loop lag p99 by job", 'max by (job) (nodejs_eventloop_lag_p99_seconds)', "s"),
  ]),
  ("Model upstreams", [
    ("Attempts/s by alias and deployment", 'sum by (alias, deployment) (rate(drael_gateway_upstream_attempts_total[5m]))', "reqps"),
    ("Failures/s by alias and kind", 'sum by (alias, kind) (rate(drael_gateway_upstream_failures_total[5m]))', "reqps"),
    ("Time to first byte p95 by alias", 'histogram_quantile(0.95, sum by (le, alias) (rate(drael_gateway_upstream_first_byte_seconds_bucket[5m])))', "s"),
    ("Cooldowns by deployment (1h)", 'sum by (deployment) (increase(drael_gateway_upstream_cooldowns_total[1h]))', "short"),
  ]),
  ("Tokens and cost", [
    ("Tokens/s by alias and direction", 'sum by (alias, direction) (rate(drael_gateway_tokens_total[5m]))', "short"),
    ("Spend USD/h by alias", 'sum by (alias) (rate(drael_gateway_cost_usd_total[1h])) * 3600', "currencyUSD"),
    ("Turns per request p90 by mode", 'histogram_quantile(0.9, sum by (le, mode) (rate(drael_gateway_turns_per_request_bucket[15m])))', "short"),
    ("spawn_agent children/s by outcome", 'sum by (outcome) (rate(drael_gateway_spawned_agents_total[5m]))', "short"),
  ]),
  ("Tools", [
    ("Tool mix: calls/s by tool", 'sum by (tool) (rate(drael_gateway_tool_call_duration_seconds_count[5m]))', "short"),
    ("Tool failures/s by tool and outcome", 'sum by (tool, outcome) (rate(drael_gateway_tool_call_duration_seconds_count{outcome!="ok"}[5m]))', "short"),
    ("Tool duration p95 by tool", 'histogram_quantile(0.95, sum by (le, tool) (rate(drael_gateway_tool_call_duration_seconds_bucket[5m])))', "s"),
    ("RPC p95 by subject (callers)", 'histogram_quantile(0.95, sum by (le, subject) (rate(drael_rpc_client_request_duration_seconds_bucket[5m])))', "s"),
    ("RPC errors/s by subject and outcome", 'sum by (subject, outcome) (rate(drael_rpc_handler_duration_seconds_count{outcome!="ok"}[5m]))', "short"),
    ("RPC in flight by subject", 'sum by (subject) (drael_rpc_handler_in_flight)', "short"),
  ]),
  ("Sandbox capacity", [
    ("Slots in use / slots", 'sum(drael_sandbox_slots_in_use) / sum(drael_sandbox_slots)', "percentunit"),
    ("Queue depth", 'sum(drael_sandbox_queue_depth)', "short"),
    ("Warm pool size", 'sum(drael_sandbox_warm_pool_size)', "short"),
    ("Sessions held", 'sum(drael_sandbox_sessions_held)', "short"),
    ("Runs/s by runtime and outcome", 'sum by (runtime, outcome) (rate(drael_sandbox_run_duration_seconds_count[5m]))', "short"),
    ("Container start p95", 'histogram_quantile(0.95, sum by (le, runtime) (rate(drael_sandbox_container_start_seconds_bucket[5m])))', "s"),
  ]),
  ("Fetch and search", [
    ("Pages/s by path and outcome", 'sum by (path, outcome) (rate(drael_fetch_page_duration_seconds_count[5m]))', "short"),
    ("SSRF refusals/s by reason", 'sum by (reason) (rate(drael_fetch_ssrf_refusals_total[5m]))', "short"),
    ("Fetch cache hit ratio", 'sum(rate(drael_fetch_cache_lookups_total{result="hit"}[15m])) / sum(rate(drael_fetch_cache_lookups_total[15m]))', "percentunit"),
    ("Browser contexts by kind", 'sum by (kind) (drael_fetch_browser_contexts)', "short"),
    ("Queries/s by outcome", 'sum by (outcome) (rate(drael_search_query_duration_seconds_count[5m]))', "short"),
    ("Engine failures/s by engine", 'sum by (engine) (rate(drael_search_engine_failures_total[5m]))', "short"),
    ("Search cache hit ratio", 'sum(rate(drael_search_cache_lookups_total{result="hit"}[15m])) / sum(rate(drael_search_cache_lookups_total[15m]))', "percentunit"),
    ("SearXNG latency p95", 'histogram_quantile(0.95, sum by (le) (rate(drael_search_searxng_duration_seconds_bucket[5m])))', "s"),
  ]),
  ("Billing and agent runs", [
    ("Hold events/s", 'sum by (event) (rate(drael_billing_holds_total[5m]))', "short"),
    ("Refusals/s by reason", 'sum by (reason) (rate(drael_billing_refusals_total[5m]))', "short"),
    ("Open holds", 'max(drael_billing_holds_open)', "short"),
    ("Holds past expiry", 'max(drael_billing_holds_open_past_expiry)', "short"),
    ("Hold latency p95", 'histogram_quantile(0.95, sum by (le) (rate(drael_billing_hold_duration_seconds_bucket[5m])))', "s"),
    ("Agent queue by state", 'max by (state) (drael_agent_run_queue_jobs)', "short"),
    ("Runs finished/s by status", 'sum by (status) (rate(drael_agent_run_runs_total[5m]))', "short"),
    ("Step duration p95 by kind", 'histogram_quantile(0.95, sum by (le, kind) (rate(drael_agent_run_step_duration_seconds_bucket[5m])))', "s"),
    ("Budget refusals and lease losses", 'sum by (reason) (rate(drael_agent_run_budget_refusals_total[15m])) or sum by (side) (rate(drael_agent_run_lease_losses_total[15m]))', "short"),
    ("Runs with a lapsed lease", 'max(drael_agent_run_runs_lease_expired)', "short"),
  ]),
  ("Dependencies and processes", [
    ("Dependency up by job", 'min by (job, dependency) (drael_dependency_up)', "short"),
    ("Targets up", 'up', "short"),
    ("Heap used by job", 'sum by (job) (nodejs_heap_size_used_bytes)', "bytes"),
    ("GC time/s by job", 'sum by (job) (rate(nodejs_gc_duration_seconds_sum[5m]))', "s"),
  ]),
]

panels, y, pid = [], 0, 1
for title, items in rows:
    panels.append({"type": "row", "title": title, "id": pid, "collapsed": False, "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}})
    pid += 1; y += 1
    for i, (ptitle, expr, unit) in enumerate(items):
        panels.append({
            "type": "timeseries", "title": ptitle, "id": pid,
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "gridPos": {"h": 7, "w": 8, "x": (i % 3) * 8, "y": y + (i // 3) * 7},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [{"refId": "A", "expr": expr, "legendFormat": "__auto"}],
        })
        pid += 1
    y += ((len(items) + 2) // 3) * 7

dashboard = {
    "title": "Drael", "uid": "drael-overview", "schemaVersion": 39, "version": 1, "editable": True,
    "time": {"from": "now-6h", "to": "now"}, "refresh": "30s", "tags": ["drael"],
    "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"}]},
    "panels": panels,
}
out = os.path.join(os.path.dirname(__file__), "..", "..", "k8s", "monitoring", "grafana-dashboard.json")
with open(out, "w") as f:
    json.dump(dashboard, f, indent=2)
    f.write("\n")
