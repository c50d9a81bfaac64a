// The bookings plugin's wiring: config, the event types, the booking flow (tables, "bookings"
// outbox events), the booking references and event types other plugins use, the scoped event
// type, booking and schedule routes, `admin booking import` and the completion sweep.
#include <chrono>
#include <memory>

#include "booking_flow.hpp"
#include "booking_import.hpp"
#include "booking_migrations.hpp"
#include "booking_reference_store.hpp"
#include "booking_routes.hpp"
#include "booking_window.hpp"
#include "completion_sweeper.hpp"
#include "event_type_service.hpp"
#include "host_writes.hpp"
#include "import_command.hpp"
#include "rendezvous/contracts/busy_times.hpp"
#include "rendezvous/plugin.hpp"
#include "reservation_flow.hpp"
#include "schedule_routes.hpp"
#include "schedule_service.hpp"
#include "upcoming_cancellations.hpp"

namespace rendezvous::bookings {
namespace {

struct BookingsConfig {
  long completion_sweep_interval = 60;
  RateLimit public_rate_limit{"bookings_public", 120, 60};  // per_minute 0: none
};

class BookingsPlugin final : public Plugin {
 public:
  BookingsPlugin(PluginContext& ctx, std::shared_ptr<BookingFlow> flow,
                 std::shared_ptr<ReservationFlow> reservations, std::unique_ptr<CompletionSweeper> sweeper,
                 std::shared_ptr<std::shared_ptr<BusyTimeSource>> busy)
      : ctx_(ctx),
        flow_(std::move(flow)),
        reservations_(std::move(reservations)),
        sweeper_(std::move(sweeper)),
        busy_(std::move(busy)) {}
  Status Start() noexcept override {
    try {
      // Found once, before any request: the flow reads it without a lock.
      *busy_ = ctx_.Find<BusyTimeSource>("calendar.busy_times");
      sweeper_->Start();
    } catch (const std::exception& e) {
      return Status(ErrorCode::kInternal, std::string("cannot start the completion sweep: ") + e.what());
    }
    return Status::Ok();
  }
  void Stop() noexcept override { sweeper_->Stop(); }

 private:
  PluginContext& ctx_;
  std::shared_ptr<BookingFlow> flow_;
  std::shared_ptr<ReservationFlow> reservations_;
  std::unique_ptr<CompletionSweeper> sweeper_;
  std::shared_ptr<std::shared_ptr<BusyTimeSource>> busy_;  // the calendar's busy times, when enabled
};

std::unique_ptr<Plugin> Create(PluginContext& ctx) {
  ConfigNode& c = ctx.config();
  BookingsConfig config;
  config.completion_sweep_interval = c.Int("completion_sweep_interval", 60, 1, 86400);
  {
    ConfigNode limit = c.Child("public_rate_limit");
    config.public_rate_limit.per_minute = limit.Int("per_minute", 120, 0, 10000000);
    config.public_rate_limit.burst = limit.Int("burst", 60, 1, 10000000);
    limit.RejectUnknown();
  }
  const int max_days_ahead = static_cast<int>(c.Int("max_days_ahead", 730, 1, 36500));
  ReservationSettings reservations;
  {
    ConfigNode holds = c.Child("reservations");
    reservations.max_minutes = static_cast<int>(holds.Int("max_minutes", 15, 1, 1440));
    reservations.minutes = static_cast<int>(holds.Int("minutes", 5, 1, reservations.max_minutes));
    reservations.per_address = static_cast<int>(holds.Int("per_address", 10, 1, 100000));
    holds.RejectUnknown();
  }
  c.RejectUnknown();

  auto busy = std::make_shared<std::shared_ptr<BusyTimeSource>>();
  BookingWindow window;
  window.SetBusySource([busy](int64_t host_id, Millis from, Millis to) {
    return *busy ? (*busy)->BusyTimes(host_id, from, to) : BusyReport{};
  });
  window.SetMaxDaysAhead(max_days_ahead);
  auto metrics = std::make_shared<BookingMetrics>(ctx.metrics());
  // The bookings, the holds and the import change a host's bookings the one way HostWrites says.
  auto writes = std::make_shared<HostWrites>(ctx.db(), ctx.outbox());
  auto flow = std::make_shared<BookingFlow>(ctx.db(), ctx.outbox(), writes, ctx.identity());
  flow->SetWindow(window);
  flow->SetMetrics(metrics);
  auto holds = std::make_shared<ReservationFlow>(ctx.db(), writes, ctx.identity());
  holds->SetWindow(window);
  holds->SetMetrics(metrics);
  holds->SetSettings(reservations);
  auto references = std::make_shared<BookingReferenceStore>(ctx.db());
  ctx.Provide<UserBookings>("bookings.user_bookings",
                            std::make_shared<UpcomingCancellations>(ctx.db(), flow));
  ctx.AddMigrations(BookingMigrations());
  ctx.Provide<BookingReferences>("bookings.references", references);
  auto event_types = std::make_shared<EventTypeService>(ctx.db(), ctx.identity());
  ctx.Provide<EventTypeDirectory>("bookings.event_types", event_types);
  RegisterBookingRoutes(ctx, BookingServices{event_types, flow, holds, references}, config.public_rate_limit);
  auto schedules = std::make_shared<ScheduleService>(ctx.db());
  ctx.Provide<UserExtension>("bookings.default_schedule", schedules);
  RegisterScheduleRoutes(ctx, schedules);
  auto import = std::make_shared<BookingImport>(ctx.identity(), writes);
  ctx.AddAdminCommand("booking",
                      [import](const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
                        return RunBookingCommand(*import, args, out, err);
                      });
  auto sweeper = std::make_unique<CompletionSweeper>(*flow, *holds, ctx.logger(),
                                                     std::chrono::seconds(config.completion_sweep_interval));
  return std::make_unique<BookingsPlugin>(ctx, std::move(flow), std::move(holds), std::move(sweeper),
                                          std::move(busy));
}

}  // namespace
}  // namespace rendezvous::bookings

RENDEZVOUS_DEFINE_PLUGIN("bookings", &rendezvous::bookings::Create)
