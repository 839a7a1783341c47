enum CaptureCorePlaceholder {}
