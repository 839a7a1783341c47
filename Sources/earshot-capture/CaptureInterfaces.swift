import EarshotDBus

/// The one declaration of each interface the capture service serves.
enum CaptureInterfaces {
    static let busName = "org.earshot.Capture1"
    static let managerPath: ObjectPath = "/org/earshot/Capture1"
    static let manager = "org.earshot.Capture1"
    static let passThru = "org.earshot.Capture1.PassThru"

    static func managerInterface(_ service: CaptureService) -> DBusInterface {
        DBusInterface(manager, methods: [
            DBusMethod("PerformAudioPassThru", in: [DBusArgument("request", "a{sv}")],
                       out: [DBusArgument("passthru", "o")]) { call in
                [.objectPath(try await service.perform(call))]
            },
            DBusMethod("EndAudioPassThru") { call in
                try service.endCallersPassThru(call)
                return []
            },
        ], properties: [
            DBusProperty("Capabilities", "aa{sv}"),
            DBusProperty("Device", "s"),
            DBusProperty("Active", "o"),
            // When the active pass-thru will end by its MaxDuration (CLOCK_MONOTONIC, µs); 0 when none records.
            DBusProperty("EndsAtMonotonicUs", "t"),
        ])
    }

    static func passThruInterface(_ session: PassThruSession) -> DBusInterface {
        DBusInterface(passThru, methods: [
            DBusMethod("End") { call in
                try await session.userEnd(.end, call: call, ownerOnly: true)
                return []
            },
            DBusMethod("Done") { call in
                try await session.userEnd(.done, call: call, ownerOnly: false)
                return []
            },
            DBusMethod("Cancel") { call in
                try await session.userEnd(.cancel, call: call, ownerOnly: false)
                return []
            },
            DBusMethod("Retry") { call in
                try await session.userEnd(.retry, call: call, ownerOnly: false)
                return []
            },
            DBusMethod("OpenStream", out: [DBusArgument("fd", "h")]) { call in
                [.unixFD(try session.openStream(call))]
            },
        ], properties: [
            DBusProperty("State", "s"),
            DBusProperty("Owner", "s", emitsChangedSignal: .const),
            DBusProperty("SamplingRate", "u", emitsChangedSignal: .const),
            DBusProperty("BitsPerSample", "u", emitsChangedSignal: .const),
            DBusProperty("Channels", "u", emitsChangedSignal: .const),
            DBusProperty("MaxDuration", "u", emitsChangedSignal: .const),
            DBusProperty("DisplayText1", "s", emitsChangedSignal: .const),
            DBusProperty("DisplayText2", "s", emitsChangedSignal: .const),
            // Changes with every chunk: read it, or watch the chunks and `Finished`.
            DBusProperty("FramesCaptured", "t", emitsChangedSignal: .false),
            // When it will end by its MaxDuration (CLOCK_MONOTONIC, µs); 0 until it records.
            DBusProperty("EndsAtMonotonicUs", "t"),
            DBusProperty("ResultCode", "s"),
        ], signals: [
            DBusSignal("AudioPassThru", [DBusArgument("data", "ay"), DBusArgument("sequence", "t"),
                                         DBusArgument("monotonicUs", "t")]),
            DBusSignal("Finished", [DBusArgument("resultCode", "s"), DBusArgument("success", "b"),
                                    DBusArgument("info", "a{sv}")]),
        ])
    }
}
