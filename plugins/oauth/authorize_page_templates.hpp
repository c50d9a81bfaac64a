// Mustache templates of the authorization pages (authorize_pages.cpp fills them): the consent page
// and the page that shows an authorization error. Every value goes through {{name}} (HTML-escaped).
// Constant data, thread-safe.
#pragma once

namespace rendezvous::oauth::templates {

inline constexpr const char* kConsentStyle = R"html(<style>
main{max-width:34rem}
.consent h1{font-size:1.35rem}
.consent ul{padding-left:1.2rem;margin:.5rem 0 1rem}
.consent li{margin:.3rem 0}
.consent .actions{display:flex;gap:.75rem;margin-top:1.25rem}
.consent .actions button{flex:1}
.consent button.secondary{background:#fff;color:#1f2933;border:1px solid #cbd2d9}
.badge{display:inline-block;padding:0 .45rem;border-radius:999px;font-size:.8rem;background:#fef3c7;color:#92400e}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
</style>)html";

// `scopes` lists {description, scope}; `fields` the hidden {name, value} pairs carrying the request.
inline constexpr const char* kConsentBody = R"html(<div class="consent">
<h1><span id="client_name">{{client_name}}</span> wants to access your Rendezvous account</h1>
{{#pending}}<p><span class="badge">Pending review</span> This client is not approved yet; only you, its owner, can authorize it, for testing.</p>{{/pending}}
<p>Signed in as <strong>{{user_email}}</strong>.</p>
{{#all_scopes}}<p>This application asks for <strong>full access to your account</strong> (it did not limit its request to particular permissions).</p>{{/all_scopes}}
{{^all_scopes}}<p>This application will be able to:</p>
<ul id="scopes">
{{#scopes}}<li>{{description}} <code>{{scope}}</code></li>
{{/scopes}}</ul>{{/all_scopes}}
<p class="muted">After you choose, you will be sent back to <strong id="redirect_host">{{redirect_host}}</strong>.</p>
<form method="post" action="/auth/oauth2/authorize">
  <input type="hidden" name="csrf_token" value="{{csrf_token}}">
{{#fields}}  <input type="hidden" name="{{name}}" value="{{value}}">
{{/fields}}  <div class="actions">
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
    <button type="submit" name="decision" value="allow">Allow</button>
  </div>
</form>
</div>)html";

inline constexpr const char* kAuthorizeErrorBody = R"html(<h1>{{title}}</h1>
<p class="error" role="alert" id="authorize_error">{{message}}</p>
<p class="muted">Return to the application you came from and try again, or contact its developer.</p>)html";

}  // namespace rendezvous::oauth::templates
