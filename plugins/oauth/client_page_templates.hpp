// Mustache templates of the OAuth client pages (client_page_views.cpp fills them). Every value
// goes through {{name}} (HTML-escaped); the only raw inserts ({{{...}}}) are other templates'
// output. Constant data, thread-safe.
#pragma once

namespace rendezvous::oauth::templates {

// Small additions to the common page stylesheet (rendezvous/pages.hpp).
inline constexpr const char* kStyle = R"html(<style>
main{max-width:52rem}
nav{margin:-.5rem 0 1.5rem;font-size:.95rem}
nav a{margin-right:1rem}
h2{font-size:1.15rem;margin:2rem 0 .75rem}
.notice{padding:.75rem;border-radius:4px;background:#e6f4ea;color:#1e4620;margin-bottom:1rem}
.secret{padding:1rem;border:2px solid #d97706;border-radius:6px;background:#fffbeb;margin:1rem 0}
.secret strong{display:block;margin-bottom:.5rem}
.secret input{font-family:ui-monospace,Menlo,Consolas,monospace}
fieldset{border:1px solid #e4e7eb;border-radius:4px;margin:1rem 0 0;padding:.25rem 1rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.check{display:flex;gap:.5rem;align-items:baseline;margin:.35rem 0}
.check label{display:inline;font-weight:normal;margin:0}
details summary{cursor:pointer;margin:.5rem 0;color:#2563eb}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;word-break:break-all}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;background:#e4e7eb}
.state-approved{background:#d1fae5;color:#065f46}
.state-pending{background:#fef3c7;color:#92400e}
.state-rejected{background:#fde2e1;color:#8a1c12}
.inline{display:inline;margin:0}
.inline button{margin-top:0;padding:.25rem .75rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1rem}
dt{font-weight:600}
dd{margin:0}
.review{border:1px solid #e4e7eb;border-radius:6px;padding:1rem;margin:1rem 0}
.review h2{margin-top:0}
ul.plain{margin:0;padding-left:1.2rem}
</style>)html";

inline constexpr const char* kNav = R"html(<nav><a href="/settings/developer/oauth">OAuth clients</a>{{#is_admin}}<a href="/admin/oauth-clients">Review OAuth clients</a>{{/is_admin}}</nav>
{{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
{{#error}}<p class="error" role="alert">{{error}}</p>{{/error}})html";

// The settings fields shared by the create and edit forms; `form` holds the values shown. The kind
// is chosen at creation only.
inline constexpr const char* kSettingsFields = R"html(
  <label for="name">Name</label>
  <input type="text" id="name" name="name" value="{{form.name}}" required>
{{#form.choose_kind}}  <label for="kind">Kind</label>
  <select id="kind" name="kind">
    <option value="confidential"{{#form.confidential}} selected{{/form.confidential}}>Confidential (server-side app, authenticates with a client secret)</option>
    <option value="public"{{^form.confidential}} selected{{/form.confidential}}>Public (browser or mobile app, uses PKCE, no secret)</option>
  </select>
{{/form.choose_kind}}  <label for="redirect_uris">Redirect URIs</label>
  <textarea id="redirect_uris" name="redirect_uris" rows="3" aria-describedby="redirect_uris_help">{{form.redirect_uris}}</textarea>
  <p class="muted" id="redirect_uris_help">One per line, at most 10. https, or http for loopback addresses only; no fragment.</p>
  <fieldset>
    <legend>Scopes</legend>
    {{#form.user_scopes}}<div class="check"><input type="checkbox" id="scope_{{scope}}" name="scope_{{scope}}" value="1"{{#checked}} checked{{/checked}}><label for="scope_{{scope}}">{{description}} <code>{{scope}}</code></label></div>
    {{/form.user_scopes}}
    <details{{#form.team_open}} open{{/form.team_open}}><summary>Team and organization scopes (optional)</summary>
    {{#form.team_scopes}}<div class="check"><input type="checkbox" id="scope_{{scope}}" name="scope_{{scope}}" value="1"{{#checked}} checked{{/checked}}><label for="scope_{{scope}}">{{description}} <code>{{scope}}</code></label></div>
    {{/form.team_scopes}}
    </details>
    {{#form.has_legacy_scopes}}<p class="muted">Legacy scopes this client still holds (see the migration guide before removing them):</p>
    {{#form.legacy_scopes}}<div class="check"><input type="checkbox" id="scope_{{scope}}" name="scope_{{scope}}" value="1"{{#checked}} checked{{/checked}}><label for="scope_{{scope}}">{{description}} <code>{{scope}}</code> (legacy)</label></div>
    {{/form.legacy_scopes}}{{/form.has_legacy_scopes}}
  </fieldset>
  <label for="purpose">Purpose</label>
  <textarea id="purpose" name="purpose" rows="3">{{form.purpose}}</textarea>
  <label for="website">Website</label>
  <input type="text" id="website" name="website" value="{{form.website}}" inputmode="url" placeholder="https://">
  <label for="logo">Logo URL</label>
  <input type="text" id="logo" name="logo" value="{{form.logo}}" inputmode="url" placeholder="https://">
  <div class="check"><input type="checkbox" id="require_par" name="require_par" value="1"{{#form.require_par}} checked{{/form.require_par}} aria-describedby="require_par_help"><label for="require_par">Require pushed authorization requests (PAR)</label></div>
  <p class="muted" id="require_par_help">When checked, the authorization page accepts only requests your app pushed first to <code>POST /v2/auth/oauth2/par</code>; a plain authorization link is refused. Changing this needs no new review.</p>
)html";

inline constexpr const char* kListBody = R"html(<h1>OAuth clients</h1>
{{{nav}}}
{{#has_clients}}<table>
<thead><tr><th>Name</th><th>Kind</th><th>State</th><th>Client ID</th></tr></thead>
<tbody>
{{#clients}}<tr>
<td><a href="/settings/developer/oauth/{{client_id}}">{{name}}</a>{{#legacy}} <span class="badge">legacy</span>{{/legacy}}</td>
<td>{{kind}}</td>
<td><span class="badge state-{{state}}">{{state}}</span>{{#review_reason}}<br><span class="muted">Reason: {{review_reason}}</span>{{/review_reason}}</td>
<td><code>{{client_id}}</code></td>
</tr>
{{/clients}}</tbody>
</table>{{/has_clients}}
{{^has_clients}}<p class="muted">You have no OAuth clients yet.</p>{{/has_clients}}
<h2>Create OAuth client</h2>
<p class="muted">A new client is pending until an administrator accepts it; until then only you can authorize with it.</p>
<form method="post" action="/settings/developer/oauth">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
{{{fields}}}
  <button type="submit">Create OAuth client</button>
</form>)html";

inline constexpr const char* kClientBody = R"html(<h1>{{client.name}}</h1>
{{{nav}}}
{{#has_secret}}<div class="secret" role="status">
  <strong>Copy this secret now. It will not be shown again.</strong>
  <label for="new_client_secret">Client secret</label>
  <input type="text" id="new_client_secret" value="{{secret}}" readonly>
</div>{{/has_secret}}
<dl>
  <dt>Client ID</dt><dd><code id="client_id">{{client.client_id}}</code></dd>
  <dt>Kind</dt><dd>{{client.kind}}</dd>
  <dt>State</dt><dd><span class="badge state-{{client.state}}" id="client_state">{{client.state}}</span>{{#client.review_reason}} <span class="muted">Reason: {{client.review_reason}}</span>{{/client.review_reason}}</dd>
  {{#client.legacy}}<dt>Legacy</dt><dd>Yes: tokens of this client are not limited by scopes. Select scopes below to migrate it.</dd>{{/client.legacy}}
  <dt>Created</dt><dd>{{client.created_at}}</dd>
</dl>
<h2>Settings</h2>
<p class="muted">Changing the name, logo, website, a redirect URI, or adding a scope sends an approved client back to review.</p>
<form method="post" action="/settings/developer/oauth/{{client.client_id}}">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
{{{fields}}}
  <button type="submit">Save changes</button>
</form>
{{#client.confidential}}<h2>Client secrets</h2>
<p class="muted">At most 2 secrets are active at once. Generate a new one, switch your app to it, then revoke the old one.</p>
{{#client.has_secrets}}<table>
<thead><tr><th>Secret</th><th>Created</th><th></th></tr></thead>
<tbody>
{{#client.secrets}}<tr>
<td><code>…{{hint}}</code></td>
<td>{{created_at}}</td>
<td><form class="inline" method="post" action="/settings/developer/oauth/{{client.client_id}}/secrets/{{secret_id}}/revoke">
<input type="hidden" name="csrf_token" value="{{csrf_token}}">
<button type="submit" class="secondary" aria-label="Revoke secret ending in {{hint}}">Revoke</button></form></td>
</tr>
{{/client.secrets}}</tbody>
</table>{{/client.has_secrets}}
{{^client.has_secrets}}<p class="muted">No active secret.</p>{{/client.has_secrets}}
<form method="post" action="/settings/developer/oauth/{{client.client_id}}/secrets">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
  <button type="submit">Generate new secret</button>
</form>{{/client.confidential}}
{{^client.confidential}}<p class="muted">Public clients have no secret; they use PKCE.</p>{{/client.confidential}})html";

inline constexpr const char* kReviewBody = R"html(<h1>Review OAuth clients</h1>
{{{nav}}}
{{^has_entries}}<p class="muted">No client is waiting for review.</p>{{/has_entries}}
{{#entries}}<section class="review" aria-label="{{name}}">
<h2>{{name}}</h2>
<dl>
  <dt>Client ID</dt><dd><code>{{client_id}}</code></dd>
  <dt>Owner</dt><dd>{{owner_name}} &lt;{{owner_email}}&gt;</dd>
  <dt>Kind</dt><dd>{{kind}}</dd>
  <dt>Scopes</dt><dd>{{#has_scopes}}<ul class="plain">{{#scopes}}<li>{{description}} <code>{{scope}}</code></li>{{/scopes}}</ul>{{/has_scopes}}{{^has_scopes}}none (legacy client){{/has_scopes}}</dd>
  <dt>Redirect URIs</dt><dd><ul class="plain">{{#redirect_uris}}<li><code>{{.}}</code></li>{{/redirect_uris}}</ul></dd>
  <dt>Purpose</dt><dd>{{purpose}}</dd>
  {{#website}}<dt>Website</dt><dd><code>{{website}}</code></dd>{{/website}}
  {{#logo}}<dt>Logo</dt><dd><code>{{logo}}</code></dd>{{/logo}}
  <dt>Submitted</dt><dd>{{updated_at}}</dd>
</dl>
<form method="post" action="/admin/oauth-clients/{{client_id}}/review">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
  <label for="reason_{{client_id}}">Reason (sent to the owner when rejecting)</label>
  <textarea id="reason_{{client_id}}" name="reason" rows="2"></textarea>
  <button type="submit" name="accept" value="1">Accept</button>
  <button type="submit" name="reject" value="1" class="secondary">Reject</button>
</form>
</section>
{{/entries}})html";

inline constexpr const char* kMessageBody = R"html(<h1>{{title}}</h1>
{{{nav}}}
<p>{{message}}</p>
<p><a href="/settings/developer/oauth">Back to your OAuth clients</a></p>)html";

}  // namespace rendezvous::oauth::templates
