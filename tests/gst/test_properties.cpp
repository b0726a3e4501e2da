// Every property of the zero123pp element at and past its limits, as gst-launch lines set them
// (strings through gst_util_set_object_arg) and as applications do (g_object_set, NULL strings):
// values in range are taken, values out of range are refused by GLib's GParamSpec checks with a
// g_warning and leave the previous value, values the element itself refuses or adjusts post a
// WARNING message on the bus naming the property, and a property that can only change in NULL or
// READY, set while PLAYING, is ignored with such a warning. An empty model folder fails the start
// with an element error, NULL brings back the default.
#include <gtest/gtest.h>

#include <gst/gst.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "element_util.hpp"
#include "gst_env.hpp"
#include "support/golden.hpp"

using namespace z123::test;

namespace {

// g_warnings of GLib-GObject (out-of-range property values) while it lives.
class GlibWarnings {
public:
  GlibWarnings() {
    id_ = g_log_set_handler("GLib-GObject", static_cast<GLogLevelFlags>(G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL),
                            on_log, this);
  }
  ~GlibWarnings() { g_log_remove_handler("GLib-GObject", id_); }
  GlibWarnings(const GlibWarnings&) = delete;
  GlibWarnings& operator=(const GlibWarnings&) = delete;
  std::vector<std::string> take() { return std::exchange(messages_, {}); }

private:
  static void on_log(const gchar*, GLogLevelFlags, const gchar* message, gpointer self) {
    static_cast<GlibWarnings*>(self)->messages_.push_back(message);
  }
  guint id_ = 0;
  std::vector<std::string> messages_;
};

// The property as gst-inspect / gst_value_serialize writes it.
std::string get(GstElement* e, const char* property) {
  GParamSpec* ps = g_object_class_find_property(G_OBJECT_GET_CLASS(e), property);
  GValue v = G_VALUE_INIT;
  g_value_init(&v, ps->value_type);
  g_object_get_property(G_OBJECT(e), property, &v);
  gchar* s = gst_value_serialize(&v);
  std::string out = s ? s : "(null)";
  g_free(s);
  g_value_unset(&v);
  return out;
}

// Text and details of the WARNING messages on `bus`, popped.
struct Warning {
  std::string text, debug, property;
};
std::vector<Warning> pop_warnings(GstBus* bus) {
  std::vector<Warning> out;
  auto messages = pop_messages(bus, GST_MESSAGE_WARNING);
  for (GstMessage* m : messages) {
    GError* err = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_warning(m, &err, &debug);
    const GstStructure* details = nullptr;
    gst_message_parse_warning_details(m, &details);
    const char* property = details ? gst_structure_get_string(details, "property") : nullptr;
    out.push_back({err ? err->message : "", debug ? debug : "", property ? property : ""});
    g_clear_error(&err);
    g_free(debug);
  }
  unref_messages(messages);
  return out;
}

enum class Outcome {
  Taken,   // the value is set, nothing said
  Refused, // GLib's range check: a g_warning, the value stays
  Silent,  // gst_util_set_object_arg could not parse the text: nothing set, nothing said
  Warned,  // the element refused or adjusted it and said so on the bus
};

struct Case {
  const char* property;
  const char* text; // as in a gst-launch line
  Outcome outcome;
  const char* after; // the property's value afterwards (serialized)
};

} // namespace

TEST(GstProperties, NumbersAndNamesAtAndPastTheirLimits) {
  GstElement* e = make_element(); // steps 1, view-size 64, seed 7
  ASSERT_NE(e, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  const Case cases[] = {
      {"steps", "200", Outcome::Taken, "200"},
      {"steps", "1", Outcome::Taken, "1"},
      {"steps", "0", Outcome::Refused, "1"},
      {"steps", "201", Outcome::Refused, "1"},
      {"steps", "-1", Outcome::Refused, "1"},
      {"steps", "2147483647", Outcome::Refused, "1"},
      {"steps", "99999999999", Outcome::Silent, "1"},
      {"steps", "28x", Outcome::Silent, "1"},
      {"guidance-scale", "100", Outcome::Taken, "100"},
      {"guidance-scale", "0", Outcome::Taken, "0"},
      {"guidance-scale", "4", Outcome::Taken, "4"},
      {"guidance-scale", "100.001", Outcome::Refused, "4"},
      {"guidance-scale", "-0.001", Outcome::Refused, "4"},
      {"guidance-scale", "nan", Outcome::Refused, "4"}, // GLib 2.74 refuses NaN; the element would too
      {"guidance-scale", "inf", Outcome::Refused, "4"},
      {"guidance-scale", "-inf", Outcome::Refused, "4"},
      {"guidance-scale", "1e400", Outcome::Refused, "4"},
      {"guidance-scale", "1.5.2", Outcome::Silent, "4"},
      {"seed", "18446744073709551615", Outcome::Taken, "18446744073709551615"},
      {"seed", "0", Outcome::Taken, "0"},
      {"seed", "18446744073709551616", Outcome::Silent, "0"},
      {"seed", "7x", Outcome::Silent, "0"},
      {"view-size", "1344", Outcome::Taken, "1344"},
      {"view-size", "64", Outcome::Taken, "64"},
      {"view-size", "63", Outcome::Refused, "64"},
      {"view-size", "1345", Outcome::Refused, "64"},
      {"view-size", "100", Outcome::Warned, "64"},
      {"view-size", "1343", Outcome::Warned, "1280"},
      {"view-size", "64", Outcome::Taken, "64"},
      {"tiling", "6x1", Outcome::Taken, "6x1"},
      {"tiling", "99", Outcome::Silent, "6x1"},
      {"tiling", "-1", Outcome::Silent, "6x1"},
      {"tiling", "7x1", Outcome::Silent, "6x1"},
      {"sampler", "euler", Outcome::Taken, "euler"},
      {"sampler", "ddim", Outcome::Silent, "euler"},
      {"timestep-spacing", "leading", Outcome::Taken, "leading"},
      {"drop-policy", "block", Outcome::Taken, "block"},
      {"random-seed", "true", Outcome::Taken, "true"},
      {"random-seed", "maybe", Outcome::Silent, "true"},
      {"precision", "f32", Outcome::Taken, "f32"},
      {"precision", "f64", Outcome::Warned, "f32"},
      {"precision", "", Outcome::Warned, "f32"},
      {"precision", "F16", Outcome::Warned, "f32"},
      {"precision", "auto", Outcome::Taken, "auto"},
      {"device", "", Outcome::Taken, "\"\""},
      {"memory", "low", Outcome::Taken, "low"},
      {"memory", "tiny", Outcome::Silent, "low"},
      {"memory", "auto", Outcome::Taken, "auto"},
  };
  GlibWarnings glib;
  for (const Case& c : cases) {
    const std::string what = std::string(c.property) + "=" + c.text;
    gst_util_set_object_arg(G_OBJECT(e), c.property, c.text);
    const auto refused = glib.take();
    const auto warnings = pop_warnings(bus);
    EXPECT_EQ(get(e, c.property), c.after) << what;
    EXPECT_EQ(refused.size(), c.outcome == Outcome::Refused ? 1u : 0u) << what;
    if (!refused.empty()) {
      EXPECT_NE(refused[0].find(c.property), std::string::npos) << refused[0];
    }
    ASSERT_EQ(warnings.size(), c.outcome == Outcome::Warned ? 1u : 0u) << what;
    if (!warnings.empty()) {
      EXPECT_EQ(warnings[0].property, c.property) << what;
      EXPECT_NE(warnings[0].text.find(c.property), std::string::npos) << what << ": " << warnings[0].text;
    }
  }
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}

// NaN cannot come through GObject (GLib refuses it, see above); a double that is one would be
// refused by the element too. Infinity and NaN given as GValues directly:
TEST(GstProperties, NonFiniteGuidanceNeverReachesTheEngine) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GlibWarnings glib;
  for (double v : {std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    g_object_set(e, "guidance-scale", v, nullptr);
    double now = 0;
    g_object_get(e, "guidance-scale", &now, nullptr);
    EXPECT_EQ(now, 4.0) << v;
  }
  EXPECT_EQ(glib.take().size(), 4u);
  gst_object_unref(e);
}

TEST(GstProperties, StringsNullAndEmpty) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  const char* env = std::getenv("Z123_MODEL_DIR");
  const std::string default_model = env && *env ? env : "models/zero123plus-v1.2";
  g_object_set(e, "model", nullptr, "device", nullptr, "precision", nullptr, nullptr);
  gchar *model = nullptr, *device = nullptr, *precision = nullptr;
  g_object_get(e, "model", &model, "device", &device, "precision", &precision, nullptr);
  EXPECT_EQ(std::string(model), default_model); // NULL: the defaults again
  EXPECT_STREQ(device, "");
  EXPECT_STREQ(precision, "auto");
  g_free(model);
  g_free(device);
  g_free(precision);

  // An empty model folder: a clear error when starting (not the working directory, no crash).
  g_object_set(e, "model", "", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  auto errors = pop_messages(bus, GST_MESSAGE_ERROR);
  ASSERT_EQ(errors.size(), 1u);
  const std::string text = error_text(errors[0]);
  EXPECT_NE(text.find("the 'model' property is empty"), std::string::npos) << text;
  unref_messages(errors);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  EXPECT_EQ(live_engines(), 0);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}

// In PLAYING, the properties the engine was loaded with are ignored, with a warning on the bus
// that names them and says so; the others apply, silently.
TEST(GstProperties, ReadyOnlyPropertiesChangedWhilePlayingWarnOnTheBus) {
  GstElement* e = make_element();
  ASSERT_NE(e, nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(e, bus);
  ASSERT_EQ(gst_element_set_state(e, GST_STATE_PLAYING), GST_STATE_CHANGE_SUCCESS);
  pop_warnings(bus);
  const std::string model_before = get(e, "model");
  const Case ignored[] = {{"model", "/elsewhere", Outcome::Warned, nullptr},
                          {"device", "other", Outcome::Warned, nullptr},
                          {"precision", "f32", Outcome::Warned, nullptr},
                          {"view-size", "128", Outcome::Warned, nullptr},
                          {"tiling", "3x2", Outcome::Warned, nullptr}};
  for (const Case& c : ignored) {
    const std::string before = get(e, c.property);
    gst_util_set_object_arg(G_OBJECT(e), c.property, c.text);
    EXPECT_EQ(get(e, c.property), before) << c.property;
    auto warnings = pop_warnings(bus);
    ASSERT_EQ(warnings.size(), 1u) << c.property;
    EXPECT_EQ(warnings[0].property, c.property);
    const std::string& t = warnings[0].text;
    EXPECT_NE(t.find(std::string("'") + c.property + "'"), std::string::npos) << t;
    EXPECT_NE(t.find("only be changed in the NULL or READY state"), std::string::npos) << t;
    EXPECT_NE(t.find("was ignored"), std::string::npos) << t;
  }
  for (const Case& c : {Case{"steps", "3", Outcome::Taken, "3"}, Case{"guidance-scale", "1", Outcome::Taken, "1"},
                        Case{"seed", "9", Outcome::Taken, "9"}, Case{"sampler", "euler", Outcome::Taken, "euler"}}) {
    gst_util_set_object_arg(G_OBJECT(e), c.property, c.text);
    EXPECT_EQ(get(e, c.property), c.after) << c.property;
    EXPECT_TRUE(pop_warnings(bus).empty()) << c.property;
  }
  // Back in READY the change is taken.
  ASSERT_EQ(gst_element_set_state(e, GST_STATE_READY), GST_STATE_CHANGE_SUCCESS);
  pop_warnings(bus);
  gst_util_set_object_arg(G_OBJECT(e), "view-size", "128");
  EXPECT_EQ(get(e, "view-size"), "128");
  EXPECT_TRUE(pop_warnings(bus).empty());
  EXPECT_EQ(get(e, "model"), model_before);
  EXPECT_EQ(gst_element_set_state(e, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  gst_element_set_bus(e, nullptr);
  gst_object_unref(bus);
  gst_object_unref(e);
}
