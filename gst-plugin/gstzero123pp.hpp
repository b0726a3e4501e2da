// The zero123pp element's GObject type: a GstElement with one always sink pad and one always src
// pad. Everything C++ (settings, queue, engine) lives in z123gst::Impl (impl.hpp),
// allocated in instance_init and freed in finalize, so the GObject struct stays plain C.
#pragma once

#include <gst/gst.h>

namespace z123gst {
struct Impl;
}

G_BEGIN_DECLS

#define GST_TYPE_ZERO123PP (gst_zero123pp_get_type())
G_DECLARE_FINAL_TYPE(GstZero123pp, gst_zero123pp, GST, ZERO123PP, GstElement)

struct _GstZero123pp {
  GstElement parent;
  GstPad* sinkpad;
  GstPad* srcpad;
  z123gst::Impl* impl;
};

GST_ELEMENT_REGISTER_DECLARE(zero123pp);
GST_DEBUG_CATEGORY_EXTERN(gst_zero123pp_debug);

G_END_DECLS
