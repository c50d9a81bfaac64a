// Mustache templates of the webhook pages (webhook_page_views.cpp fills them). Every value goes
// through {{name}} (HTML-escaped); the only raw inserts ({{{...}}}) are other templates' output.
// Constant data, thread-safe.
#pragma once

namespace rendezvous::webhooks::templates {

// Additions to the common page stylesheet (rendezvous/pages.hpp): a wider page for the delivery
// log, badges, and on a narrow screen a page without margins and tables shown as one block per
// row, each cell under its column's name.
inline constexpr const char* kStyle = R"html(<style>
main{max-width:62rem}
nav{margin:-.5rem 0 1.5rem;font-size:.95rem}
nav a{margin-right:1rem}
h1{overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:2rem 0 .75rem}
.notice{padding:.75rem;border-radius:4px;background:#e6f4ea;color:#1e4620;margin-bottom:1rem}
fieldset{border:1px solid #e4e7eb;border-radius:4px;margin:1rem 0 0;padding:.25rem 1rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.triggers{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:0 1rem}
.check{display:flex;gap:.5rem;align-items:baseline;margin:.35rem 0}
.check label{display:inline;font-weight:normal;margin:0}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
code{overflow-wrap:anywhere}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f7fa;padding:.5rem;border-radius:4px;margin:.25rem 0}
textarea{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;background:#e4e7eb;white-space:nowrap}
.ok{background:#d1fae5;color:#065f46}
.pending{background:#fef3c7;color:#92400e}
.bad{background:#fde2e1;color:#8a1c12}
.inline{display:inline;margin:0}
.inline button{margin-top:0;padding:.25rem .75rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center}
.actions button{margin-top:0}
button.danger{background:#b42318}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dt{font-weight:600}
dd{margin:0;min-width:0}
td{vertical-align:top}
ol.attempts{margin:0;padding-left:1.2rem}
ol.attempts li{margin:0 0 .25rem}
details summary{cursor:pointer;color:#2563eb}
.pages{display:flex;gap:1rem;margin-top:1rem}
@media (max-width:40rem){
main{margin:0;padding:1rem;border:0;border-radius:0}
dl{grid-template-columns:1fr}
dd{margin-bottom:.5rem}
table.stack thead{display:none}
table.stack tr{display:block;border-bottom:1px solid #e4e7eb;padding:.5rem 0}
table.stack td{display:block;border:0;padding:.15rem 0}
table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
</style>)html";

inline constexpr const char* kNav =
    R"html({{#back}}<nav><a href="/settings/developer/webhooks">All your webhooks</a></nav>{{/back}}
{{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
{{#error}}<p class="error" role="alert">{{error}}</p>{{/error}})html";

// The fields of the create and edit forms; `form` holds the values shown.
inline constexpr const char* kFormFields = R"html(
  <label for="subscriber_url">Subscriber URL</label>
  <input type="url" id="subscriber_url" name="subscriber_url" value="{{form.subscriber_url}}" required maxlength="2048" placeholder="https://" aria-describedby="subscriber_url_help">
  <p class="muted" id="subscriber_url_help">Each event is sent here as an HTTP POST.</p>
  <label for="secret">Secret</label>
  <input type="password" id="secret" name="secret" value="{{form.secret}}" autocomplete="new-password" maxlength="256" aria-describedby="secret_help">
  <p class="muted" id="secret_help">{{#editing}}{{#has_secret}}A secret is set. Leave this empty to keep it, or type a new one to replace it.{{/has_secret}}{{^has_secret}}No secret is set: deliveries are not signed. Type one to sign them.{{/has_secret}}{{/editing}}{{^editing}}Optional. Deliveries are signed with it (<code>webhook-signature</code> and <code>X-Cal-Signature-256</code>); without one they are not signed.{{/editing}}</p>
{{#editing}}{{#has_secret}}  <div class="check"><input type="checkbox" id="remove_secret" name="remove_secret" value="1"{{#form.remove_secret}} checked{{/form.remove_secret}}><label for="remove_secret">Remove the secret (send deliveries unsigned)</label></div>
{{/has_secret}}{{/editing}}  <label for="payload_template">Payload template</label>
  <textarea id="payload_template" name="payload_template" rows="4" aria-describedby="payload_template_help">{{form.payload_template}}</textarea>
  <p class="muted" id="payload_template_help">Optional. Placeholders such as <code>{&#123;triggerEvent}}</code>, <code>{&#123;organizer.name}}</code> or <code>{&#123;attendees.0.email}}</code> are filled from the event. Empty: the standard JSON body.</p>
  <fieldset>
    <legend>Triggers</legend>
    <div class="triggers">
    {{#form.triggers}}<div class="check"><input type="checkbox" id="trigger_{{name}}" name="trigger_{{name}}" value="1"{{#checked}} checked{{/checked}}><label for="trigger_{{name}}">{{name}}</label></div>
    {{/form.triggers}}
    </div>
  </fieldset>
  <div class="check"><input type="checkbox" id="active" name="active" value="1"{{#form.active}} checked{{/form.active}}><label for="active">Active</label></div>
)html";

inline constexpr const char* kListBody = R"html(<h1>Webhooks</h1>
{{{nav}}}
<p class="muted">Rendezvous sends an HTTP POST to each active webhook when one of its triggers happens to your bookings.</p>
{{#has_webhooks}}<table class="stack">
<thead><tr><th>Subscriber URL</th><th>Triggers</th><th>State</th></tr></thead>
<tbody>
{{#webhooks}}<tr>
<td data-label="Subscriber URL"><a href="/settings/developer/webhooks/{{id}}">{{subscriber_url}}</a></td>
<td data-label="Triggers">{{triggers}}</td>
<td data-label="State">{{#active}}<span class="badge ok">active</span>{{/active}}{{^active}}<span class="badge">inactive</span>{{/active}}</td>
</tr>
{{/webhooks}}</tbody>
</table>{{/has_webhooks}}
{{^has_webhooks}}<p class="muted">You have no webhooks yet.</p>{{/has_webhooks}}
{{#has_client_webhooks}}<h2>Your OAuth clients' webhooks</h2>
<p class="muted">Your OAuth clients made these through the API. Each gets the events of the bookings of every user its client manages.</p>
<table class="stack" id="client_webhooks">
<thead><tr><th>Subscriber URL</th><th>OAuth client</th><th>Triggers</th><th>State</th></tr></thead>
<tbody>
{{#client_webhooks}}<tr>
<td data-label="Subscriber URL"><a href="/settings/developer/webhooks/{{id}}">{{subscriber_url}}</a></td>
<td data-label="OAuth client"><code>{{client_id}}</code></td>
<td data-label="Triggers">{{triggers}}</td>
<td data-label="State">{{#active}}<span class="badge ok">active</span>{{/active}}{{^active}}<span class="badge">inactive</span>{{/active}}</td>
</tr>
{{/client_webhooks}}</tbody>
</table>{{/has_client_webhooks}}
<h2>New webhook</h2>
<form method="post" action="/settings/developer/webhooks">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
{{{fields}}}
  <button type="submit">Save</button>
</form>)html";

inline constexpr const char* kWebhookBody = R"html(<h1>Webhook {{webhook.subscriber_url}}</h1>
{{{nav}}}
<dl>
  <dt>Subscriber URL</dt><dd><code id="subscriber_url_shown">{{webhook.subscriber_url}}</code></dd>
  <dt>State</dt><dd>{{#webhook.active}}<span class="badge ok" id="webhook_state">active</span>{{/webhook.active}}{{^webhook.active}}<span class="badge" id="webhook_state">inactive</span> <span class="muted">It receives no events until you tick Active below.</span>{{/webhook.active}}</dd>
  <dt>Triggers</dt><dd>{{webhook.triggers}}</dd>
  <dt>Signed</dt><dd>{{#webhook.has_secret}}Yes, with its secret{{/webhook.has_secret}}{{^webhook.has_secret}}No (no secret){{/webhook.has_secret}}</dd>
  {{#webhook.event_type_id}}<dt>Event type</dt><dd>Only the bookings of event type {{webhook.event_type_id}}</dd>{{/webhook.event_type_id}}
  {{#webhook.client_id}}<dt>OAuth client</dt><dd>The bookings of every user managed by <code>{{webhook.client_id}}</code></dd>{{/webhook.client_id}}
</dl>
<form class="actions" method="post" action="/settings/developer/webhooks/{{webhook.id}}/ping">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
  <button type="submit">Send test event</button>
  <span class="muted">Sends a <code>PING</code> event now; it shows below.</span>
</form>
<h2>Deliveries</h2>
{{#has_deliveries}}<p class="muted">{{range}}</p>
<table class="stack" id="deliveries">
<thead><tr><th>Trigger</th><th>Status</th><th>Attempts</th><th></th></tr></thead>
<tbody>
{{#deliveries}}<tr data-delivery="{{id}}">
<td data-label="Trigger">{{trigger}}<br><code class="muted" title="webhook-id">{{message_id}}</code></td>
<td data-label="Status"><span class="badge {{status_class}}">{{status}}</span></td>
<td data-label="Attempts">{{#has_attempts}}<ol class="attempts">{{#attempts}}<li><time datetime="{{at}}">{{at_text}}</time> · {{outcome}}{{#error}} · <span class="muted">{{error}}</span>{{/error}}{{#response}}<details><summary>Response</summary><pre>{{response}}</pre></details>{{/response}}</li>{{/attempts}}</ol>{{/has_attempts}}{{^has_attempts}}<span class="muted">Not sent yet</span>{{/has_attempts}}</td>
<td>{{#failed}}<form class="inline" method="post" action="/settings/developer/webhooks/{{webhook_id}}/deliveries/{{id}}/retry">
<input type="hidden" name="csrf_token" value="{{csrf_token}}">
<button type="submit">Retry</button></form>{{/failed}}</td>
</tr>
{{/deliveries}}</tbody>
</table>
<div class="pages">{{#newer}}<a href="/settings/developer/webhooks/{{webhook.id}}?skip={{newer}}">Newer deliveries</a>{{/newer}}{{#first_page}}<a href="/settings/developer/webhooks/{{webhook.id}}">Newest deliveries</a>{{/first_page}}{{#older}}<a href="/settings/developer/webhooks/{{webhook.id}}?skip={{older}}">Older deliveries</a>{{/older}}</div>{{/has_deliveries}}
{{^has_deliveries}}<p class="muted">No deliveries yet. They appear here when a booking event reaches this webhook, or when you send a test event.</p>{{/has_deliveries}}
<h2>Settings</h2>
<form method="post" action="/settings/developer/webhooks/{{webhook.id}}">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
{{{fields}}}
  <button type="submit">Save</button>
</form>
<h2>Delete</h2>
<form method="post" action="/settings/developer/webhooks/{{webhook.id}}/delete">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
  <div class="check"><input type="checkbox" id="confirm_delete" name="confirm" value="1" required><label for="confirm_delete">Delete this webhook and its delivery log</label></div>
  <button type="submit" class="danger">Delete webhook</button>
</form>)html";

inline constexpr const char* kMessageBody = R"html(<h1>{{title}}</h1>
{{{nav}}}
<p>{{message}}</p>
<p><a href="/settings/developer/webhooks">Back to your webhooks</a></p>)html";

}  // namespace rendezvous::webhooks::templates
