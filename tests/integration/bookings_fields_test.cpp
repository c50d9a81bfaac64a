// Booking questions (DESIGN §10) with the real server, MariaDB and a webhook receiver on loopback:
// an event type's `bookingFields` (Cal.com's default fields plus custom ones) stored, shown and
// refused with the member at fault named; a booking's `bookingFieldsResponses` checked against
// them before anything is written (a missing required answer, an answer of the wrong kind, an
// unknown slug: 400 naming it), stored, returned on the booking's answers, delivered in
// BOOKING_CREATED's `payload.responses` and read there by a Lua render script; and what was
// accepted before (a booking without answers of an event type without required questions) still
// accepted.
#include <fstream>
#include <string>
#include <vector>

#include "eventually.hpp"
#include "temp_dir.hpp"
#include "webhooks_fixture.hpp"

namespace rendezvous::testing {
namespace {

PeerResponse Ok() {
  PeerResponse r;
  r.status = 200;
  r.content_type = "text/plain";
  r.body = "ok";
  return r;
}

// Custom fields of every kind Cal.com has, the name field relabelled.
json Questions() {
  return json::array({
      {{"type", "name"}, {"label", "Full name"}, {"placeholder", "Ann Example"}},
      {{"type", "text"},
       {"slug", "company"},
       {"label", "Company"},
       {"required", true},
       {"placeholder", "ACME"}},
      {{"type", "number"}, {"slug", "seats"}, {"label", "Seats"}, {"required", false}},
      {{"type", "select"},
       {"slug", "plan"},
       {"label", "Plan"},
       {"required", true},
       {"options", {"Free", "Pro"}}},
      {{"type", "multiselect"},
       {"slug", "topics"},
       {"label", "Topics"},
       {"options", {"API", "Billing", "SSO"}}},
      {{"type", "boolean"}, {"slug", "newsletter"}, {"label", "Newsletter"}},
      {{"type", "checkbox"}, {"slug", "days"}, {"label", "Days"}, {"options", {"Mon", "Tue"}}},
      {{"type", "radio"}, {"slug", "size"}, {"label", "Team size"}, {"options", {"1-10", "11+"}}},
      {{"type", "phone"}, {"slug", "mobile"}, {"label", "Mobile"}},
      {{"type", "address"}, {"slug", "office"}, {"label", "Office"}},
      {{"type", "textarea"}, {"slug", "agenda"}, {"label", "Agenda"}},
      {{"type", "multiemail"}, {"slug", "cc"}, {"label", "Copy to"}},
      {{"type", "text"},
       {"slug", "internal-ref"},
       {"label", "Internal"},
       {"required", true},
       {"hidden", true}},
  });
}

class BookingsFields : public WebhooksFixture {
 protected:
  json Booking(int64_t event_type, const std::string& start, json extra = json::object()) {
    json body = {{"start", start},
                 {"eventTypeId", event_type},
                 {"attendee", {{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"timeZone", "UTC"}}}};
    body.update(extra);
    return body;
  }
  HttpResult Book(int64_t event_type, const std::string& start, json extra = json::object()) {
    return Call("POST", "/v2/bookings", "", Booking(event_type, start, extra));
  }
  int64_t Bookings() const { return Count("SELECT COUNT(*) FROM bookings"); }
  static std::vector<std::string> Slugs(const json& fields) {
    std::vector<std::string> out;
    for (const json& f : fields) out.push_back(f.value("slug", ""));
    return out;
  }

  rdv_test::TempDir dir_{"rdv-bookings-fields"};
};

const std::vector<std::string> kDefaultSlugs = {"name",  "email",  "location",
                                                "notes", "guests", "rescheduleReason"};

TEST_F(BookingsFields, EventTypesShowTheDefaultFieldsAndStoreCustomOnes) {
  StartServer();
  // Without questions: Cal.com's default fields, marked isDefault.
  const json plain = CreateEventType(owner_key_, "plain");
  ASSERT_EQ(Slugs(plain["bookingFields"]), kDefaultSlugs) << plain.dump();
  for (const json& f : plain["bookingFields"]) {
    EXPECT_EQ(f["isDefault"], true) << f;
    EXPECT_TRUE(f["required"].is_boolean()) << f;
    EXPECT_TRUE(f["type"].is_string()) << f;
  }
  EXPECT_EQ(plain["bookingFields"][0]["required"], true);
  EXPECT_EQ(plain["bookingFields"][1]["type"], "email");
  EXPECT_EQ(plain["bookingFields"][4]["type"], "multiemail");
  EXPECT_EQ(plain["bookingFields"][4]["hidden"], false);

  // With questions: the defaults (name relabelled), then the custom fields in order.
  const json asked = CreateEventType(owner_key_, "asked", 30, {{"bookingFields", Questions()}});
  const json& fields = asked["bookingFields"];
  std::vector<std::string> expected = kDefaultSlugs;
  for (const char* s : {"company", "seats", "plan", "topics", "newsletter", "days", "size", "mobile",
                        "office", "agenda", "cc", "internal-ref"})
    expected.push_back(s);
  ASSERT_EQ(Slugs(fields), expected) << fields.dump();
  EXPECT_EQ(fields[0]["label"], "Full name");
  EXPECT_EQ(fields[0]["placeholder"], "Ann Example");
  EXPECT_EQ(fields[6], json({{"type", "text"},
                             {"slug", "company"},
                             {"label", "Company"},
                             {"required", true},
                             {"hidden", false},
                             {"disableOnPrefill", false},
                             {"placeholder", "ACME"},
                             {"isDefault", false}}));
  EXPECT_EQ(fields[8]["options"], json({"Free", "Pro"}));
  EXPECT_FALSE(fields[10].contains("placeholder"));  // boolean
  // Stored: GET and the list show the same.
  const std::string path = "/v2/event-types/" + std::to_string(asked["id"].get<int64_t>());
  HttpResult got = Call("GET", path, owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"]["bookingFields"], fields);
  HttpResult list = Call("GET", "/v2/event-types", owner_key_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.Json()["data"][1]["bookingFields"], fields);

  // A list read back from the API is accepted as it is, and changes nothing.
  HttpResult same = Call("PATCH", path, owner_key_, json{{"bookingFields", fields}});
  ASSERT_EQ(same.status, 200) << same.body;
  EXPECT_EQ(same.Json()["data"]["bookingFields"], fields);
  // A PATCH without bookingFields keeps them.
  HttpResult kept = Call("PATCH", path, owner_key_, json{{"disableGuests", true}});
  ASSERT_EQ(kept.status, 200) << kept.body;
  EXPECT_EQ(kept.Json()["data"]["bookingFields"], fields);
  // null (or []) goes back to the default fields.
  HttpResult reset = Call("PATCH", path, owner_key_, json{{"bookingFields", nullptr}});
  ASSERT_EQ(reset.status, 200) << reset.body;
  EXPECT_EQ(Slugs(reset.Json()["data"]["bookingFields"]), kDefaultSlugs);
  EXPECT_EQ(reset.Json()["data"]["bookingFields"][0]["label"], "Your name");
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types WHERE booking_fields IS NOT NULL"), 0);
}

TEST_F(BookingsFields, BadDefinitionsAreRefusedNamingTheMember) {
  StartServer();
  const json plain = CreateEventType(owner_key_, "plain", 30, {{"bookingFields", Questions()}});
  const std::string path = "/v2/event-types/" + std::to_string(plain["id"].get<int64_t>());
  auto text = [](const std::string& slug) {
    return json{{"type", "text"}, {"slug", slug}, {"label", "Q " + slug}};
  };
  json too_many = json::array();
  for (int i = 0; i <= 30; ++i) too_many.push_back(text("q" + std::to_string(i)));
  json many_options = json::array();
  for (int i = 0; i <= 50; ++i) many_options.push_back("o" + std::to_string(i));
  struct Case {
    json fields;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"text", "bookingFields"},
      {json::array({"text"}), "bookingFields[0]"},
      {json::array({{{"slug", "a"}, {"label", "A"}}}), "bookingFields[0].type"},
      {json::array({{{"type", "color"}, {"slug", "a"}, {"label", "A"}}}), "bookingFields[0].type"},
      {json::array({{{"type", "text"}, {"label", "A"}}}), "bookingFields[0].slug"},
      {json::array({text("has space")}), "bookingFields[0].slug"},
      {json::array({text("9lives")}), "bookingFields[0].slug"},
      {json::array({text(std::string(65, 'a'))}), "bookingFields[0].slug"},
      {json::array({text("email")}), "bookingFields[0].slug"},
      {json::array({text("a"), text("a")}), "bookingFields[1].slug"},
      {json::array({{{"type", "text"}, {"slug", "a"}}}), "bookingFields[0].label"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", "  "}}}), "bookingFields[0].label"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", std::string(256, 'L')}}}),
       "bookingFields[0].label"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", "A"}, {"required", "yes"}}}),
       "bookingFields[0].required"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", "A"}, {"color", "red"}}}),
       "bookingFields[0].color"},
      {json::array({{{"type", "boolean"}, {"slug", "a"}, {"label", "A"}, {"placeholder", "x"}}}),
       "bookingFields[0].placeholder"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", "A"}, {"options", {"x"}}}}),
       "bookingFields[0].options"},
      {json::array({{{"type", "select"}, {"slug", "a"}, {"label", "A"}}}), "bookingFields[0].options"},
      {json::array({{{"type", "select"}, {"slug", "a"}, {"label", "A"}, {"options", json::array()}}}),
       "bookingFields[0].options"},
      {json::array({{{"type", "radio"}, {"slug", "a"}, {"label", "A"}, {"options", many_options}}}),
       "bookingFields[0].options"},
      {json::array(
           {{{"type", "checkbox"}, {"slug", "a"}, {"label", "A"}, {"options", {std::string(256, 'o')}}}}),
       "bookingFields[0].options[0]"},
      {json::array({{{"type", "multiselect"}, {"slug", "a"}, {"label", "A"}, {"options", {"x", "x"}}}}),
       "bookingFields[0].options[1]"},
      {json::array({{{"type", "text"}, {"slug", "a"}, {"label", "A"}, {"isDefault", true}}}),
       "bookingFields[0].isDefault"},
      {json::array({{{"type", "name"}, {"required", false}}}), "bookingFields[0].required"},
      {json::array({{{"type", "email"}}, {{"type", "email"}}}), "bookingFields[1].type"},
      {too_many, "bookingFields[30]"},
  };
  for (const Case& c : cases) {
    HttpResult created =
        Call("POST", "/v2/event-types", owner_key_,
             json{{"title", "T"}, {"slug", "t"}, {"lengthInMinutes", 30}, {"bookingFields", c.fields}});
    EXPECT_EQ(created.status, 400) << c.fields.dump() << " " << created.body;
    EXPECT_EQ(created.Json()["error"]["details"]["field"], c.field) << c.fields.dump() << " " << created.body;
    HttpResult patched = Call("PATCH", path, owner_key_, json{{"bookingFields", c.fields}});
    EXPECT_EQ(patched.status, 400) << c.fields.dump() << " " << patched.body;
    EXPECT_EQ(patched.Json()["error"]["details"]["field"], c.field) << c.fields.dump() << " " << patched.body;
  }
  // Nothing was written: one event type, its questions unchanged.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM event_types"), 1);
  EXPECT_EQ(Call("GET", path, owner_key_).Json()["data"]["bookingFields"], plain["bookingFields"]);
}

TEST_F(BookingsFields, AnswersAreCheckedStoredReturnedDeliveredAndSeenByLua) {
  LoopbackHttpServer receiver([](const PeerRequest&) { return Ok(); });
  // The render script reads payload.responses for the webhook whose URL ends in /lua; the other
  // gets the built-in body.
  const std::string render = dir_.path() + "/render.lua";
  std::ofstream(render) << "function render(template, event, webhook)\n"
                           "  if not webhook.subscriberUrl:find('/lua$') then return nil end\n"
                           "  local r = event.payload.responses\n"
                           "  return 'company=' .. r.company.value .. ';plan=' .. r.plan.value ..\n"
                           "         ';label=' .. r.company.label .. ';name=' .. r.name.value\n"
                           "end\n";
  StartServer(std::string(kTestPlugins) + "  scripts:\n    render: \"" + render + "\"\n" +
              kUnlimitedPublicRoutes);
  CreateWebhook(Body(receiver.url() + "/json", {"BOOKING_CREATED"}));
  CreateWebhook(Body(receiver.url() + "/lua", {"BOOKING_CREATED"}));
  const int64_t et =
      CreateEventType(owner_key_, "asked", 30, {{"bookingFields", Questions()}})["id"].get<int64_t>();
  const std::string monday = Monday();
  const json good = {{"company", "  ACME Ltd  "},
                     {"plan", "Pro"},
                     {"seats", 12},
                     {"topics", {"API", "SSO"}},
                     {"newsletter", false},
                     {"days", {"Tue"}},
                     {"size", "11+"},
                     {"mobile", "+14155550123"},
                     {"office", "1 Main St"},
                     {"agenda", "Line one\nLine two"},
                     {"cc", {"boss@example.com"}},
                     {"notes", "Please call first"}};
  auto with = [&](const std::string& slug, const json& value) {
    json r = good;
    if (value.is_null())
      r.erase(slug);
    else
      r[slug] = value;
    return r;
  };
  struct Case {
    json responses;
    std::string field;
  };
  const std::vector<Case> cases = {
      {json(), "bookingFieldsResponses.company"},  // none given: the first required one is named
      {with("company", nullptr), "bookingFieldsResponses.company"},
      {with("company", "   "), "bookingFieldsResponses.company"},
      {with("plan", nullptr), "bookingFieldsResponses.plan"},
      {with("seats", "12"), "bookingFieldsResponses.seats"},
      {with("plan", "Enterprise"), "bookingFieldsResponses.plan"},
      {with("plan", json::array({"Pro"})), "bookingFieldsResponses.plan"},
      {with("newsletter", "yes"), "bookingFieldsResponses.newsletter"},
      {with("topics", "API"), "bookingFieldsResponses.topics"},
      {with("topics", json::array({"API", "Sales"})), "bookingFieldsResponses.topics[1]"},
      {with("days", json::array({"Mon", "Mon"})), "bookingFieldsResponses.days[1]"},
      {with("size", "12"), "bookingFieldsResponses.size"},
      {with("mobile", "call me"), "bookingFieldsResponses.mobile"},
      {with("cc", json::array({"not-an-email"})), "bookingFieldsResponses.cc[0]"},
      {with("company", std::string(1001, 'c')), "bookingFieldsResponses.company"},
      {with("agenda", json::object()), "bookingFieldsResponses.agenda"},
      {with("notes", 5), "bookingFieldsResponses.notes"},
      {with("favourite-colour", "blue"), "bookingFieldsResponses.favourite-colour"},
      {with("email", "ann@example.com"), "bookingFieldsResponses.email"},
      {with("guests", json::array()), "bookingFieldsResponses.guests"},
      {with("bad slug", "x"), "bookingFieldsResponses"},
  };
  for (const Case& c : cases) {
    json extra = json::object();
    if (!c.responses.is_null()) extra["bookingFieldsResponses"] = c.responses;
    HttpResult r = Book(et, At(monday, "10:00"), extra);
    EXPECT_EQ(r.status, 400) << c.responses.dump() << " " << r.body;
    EXPECT_EQ(r.Json()["error"]["details"]["field"], c.field) << c.responses.dump() << " " << r.body;
  }
  HttpResult not_object = Book(et, At(monday, "10:00"), {{"bookingFieldsResponses", {"company"}}});
  EXPECT_EQ(not_object.status, 400);
  EXPECT_EQ(not_object.Json()["error"]["details"]["field"], "bookingFieldsResponses");
  EXPECT_EQ(Bookings(), 0);
  EXPECT_EQ(OutboxCount("BOOKING_CREATED"), 0);

  // Answered: stored and returned with the default fields' answers (the hidden required field
  // needs none; optional ones left out are absent).
  HttpResult made =
      Book(et, At(monday, "10:00"), {{"bookingFieldsResponses", good}, {"guests", {"gus@example.com"}}});
  ASSERT_EQ(made.status, 201) << made.body;
  json expected = good;
  expected["company"] = "ACME Ltd";
  expected["name"] = "Ann Attendee";
  expected["email"] = "ann@example.com";
  expected["guests"] = {"gus@example.com"};
  const json booking = made.Json()["data"];
  EXPECT_EQ(booking["bookingFieldsResponses"], expected) << booking.dump();
  EXPECT_EQ(booking["description"], "Please call first");  // notes are the booking's description
  const std::string uid = booking["uid"];
  HttpResult got = Call("GET", "/v2/bookings/" + uid, owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"]["bookingFieldsResponses"], expected);
  HttpResult list = Call("GET", "/v2/bookings", owner_key_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.Json()["data"][0]["bookingFieldsResponses"], expected);

  // Delivered in BOOKING_CREATED's payload.responses, Cal.com's {label, value} by slug.
  ASSERT_TRUE(receiver.AwaitRequests(2));
  json delivered, lua_body;
  for (const PeerRequest& r : receiver.Requests()) {
    if (r.path == "/json") delivered = json::parse(r.body, nullptr, false);
    if (r.path == "/lua") lua_body = r.body;
  }
  ASSERT_TRUE(delivered.is_object()) << delivered;
  EXPECT_EQ(delivered["triggerEvent"], "BOOKING_CREATED");
  const json& responses = delivered["payload"]["responses"];
  EXPECT_EQ(responses["company"], json({{"label", "Company"}, {"value", "ACME Ltd"}})) << responses.dump();
  EXPECT_EQ(responses["seats"], json({{"label", "Seats"}, {"value", 12}}));
  EXPECT_EQ(responses["topics"]["value"], json({"API", "SSO"}));
  EXPECT_EQ(responses["newsletter"]["value"], false);
  EXPECT_EQ(responses["name"]["value"], "Ann Attendee");
  EXPECT_EQ(responses["email"]["value"], "ann@example.com");
  EXPECT_EQ(responses["guests"]["value"], json({"gus@example.com"}));
  EXPECT_EQ(responses["notes"]["value"], "Please call first");
  EXPECT_FALSE(responses.contains("internal-ref"));
  EXPECT_EQ(delivered["payload"]["userFieldsResponses"]["plan"], json({{"label", "Plan"}, {"value", "Pro"}}));
  EXPECT_FALSE(delivered["payload"]["userFieldsResponses"].contains("name"));
  // The Lua render script read the same values from the event's payload.
  EXPECT_EQ(lua_body, "company=ACME Ltd;plan=Pro;label=Company;name=Ann Attendee");

  // Every later answer carries them; a reschedule keeps them on the new booking.
  HttpResult rescheduled =
      Call("POST", "/v2/bookings/" + uid + "/reschedule", "", json{{"start", At(monday, "11:00")}});
  ASSERT_EQ(rescheduled.status, 201) << rescheduled.body;
  EXPECT_EQ(rescheduled.Json()["data"]["bookingFieldsResponses"], expected);
  const std::string moved = rescheduled.Json()["data"]["uid"];
  EXPECT_EQ(LastOutbox("BOOKING_RESCHEDULED")["payload"]["responses"]["plan"]["value"], "Pro");
  HttpResult cancelled = Call("POST", "/v2/bookings/" + moved + "/cancel", "", json::object());
  ASSERT_EQ(cancelled.status, 200) << cancelled.body;
  EXPECT_EQ(cancelled.Json()["data"]["bookingFieldsResponses"], expected);
  EXPECT_EQ(LastOutbox("BOOKING_CANCELLED")["payload"]["responses"]["company"]["value"], "ACME Ltd");
}

TEST_F(BookingsFields, WhatWasAcceptedBeforeIsStillAccepted) {
  StartServer(kUnlimitedPublicRoutes);
  const std::string monday = Monday();
  // No questions: a booking without answers books; the answers are the default fields'.
  const int64_t plain = CreateEventType(owner_key_, "plain")["id"].get<int64_t>();
  HttpResult made = Book(plain, At(monday, "09:00"));
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.Json()["data"]["bookingFieldsResponses"],
            json({{"name", "Ann Attendee"}, {"email", "ann@example.com"}, {"guests", json::array()}}));
  EXPECT_EQ(LastOutbox("BOOKING_CREATED")["payload"]["responses"],
            json({{"name", {{"label", "Your name"}, {"value", "Ann Attendee"}}},
                  {"email", {{"label", "Email address"}, {"value", "ann@example.com"}}},
                  {"guests", {{"label", "Add guests"}, {"value", json::array()}}}}));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM bookings WHERE booking_fields_responses IS NOT NULL"), 0);
  // An empty object is no answer either; notes alone are accepted on any event type.
  EXPECT_EQ(Book(plain, At(monday, "10:00"), {{"bookingFieldsResponses", json::object()}}).status, 201);
  HttpResult noted = Book(plain, At(monday, "11:00"), {{"bookingFieldsResponses", {{"notes", "Hi"}}}});
  ASSERT_EQ(noted.status, 201) << noted.body;
  EXPECT_EQ(noted.Json()["data"]["bookingFieldsResponses"]["notes"], "Hi");
  // Optional questions only (and a hidden required one): no answers needed.
  const int64_t optional =
      CreateEventType(owner_key_, "optional", 30,
                      {{"bookingFields", json::array({{{"type", "text"}, {"slug", "why"}, {"label", "Why"}},
                                                      {{"type", "boolean"},
                                                       {"slug", "secret"},
                                                       {"label", "Secret"},
                                                       {"required", true},
                                                       {"hidden", true}}})}})["id"]
          .get<int64_t>();
  HttpResult bare = Book(optional, At(monday, "13:00"));
  ASSERT_EQ(bare.status, 201) << bare.body;
  EXPECT_FALSE(bare.Json()["data"]["bookingFieldsResponses"].contains("why"));
  // An answer to a hidden field is taken.
  HttpResult hidden = Book(optional, At(monday, "14:00"), {{"bookingFieldsResponses", {{"secret", true}}}});
  ASSERT_EQ(hidden.status, 201) << hidden.body;
  EXPECT_EQ(hidden.Json()["data"]["bookingFieldsResponses"]["secret"], true);
  // Imported bookings (no answers) show the default fields' answers too.
  const json imported = Import(owner_, plain, "2030-03-04T10:00:00Z");
  HttpResult got = Call("GET", "/v2/bookings/" + imported.value("uid", ""), owner_key_);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.Json()["data"]["bookingFieldsResponses"]["email"], "ann@example.com");
}

}  // namespace
}  // namespace rendezvous::testing
