import EarshotContract
import EarshotDBus

/// The capture service's handlers, bound to the contract's declarations.
enum CaptureInterfaces {
    typealias Manager = CaptureContract.Manager
    typealias PassThru = CaptureContract.PassThru

    static let managerPath = ObjectPath(declared: CaptureContract.managerPath)

    static func managerInterface(_ service: CaptureService) -> DBusInterface {
        DBusInterface(Manager.interface, methods: [
            DBusMethod(Manager.performAudioPassThru) { call in
                [.objectPath(try await service.perform(call))]
            },
            DBusMethod(Manager.endAudioPassThru) { call in
                try service.endCallersPassThru(call)
                return []
            },
        ])
    }

    static func passThruInterface(_ session: PassThruSession) -> DBusInterface {
        DBusInterface(PassThru.interface, methods: [
            DBusMethod(PassThru.end) { call in
                try await session.userEnd(.end, call: call, ownerOnly: true)
                return []
            },
            DBusMethod(PassThru.done) { call in
                try await session.userEnd(.done, call: call, ownerOnly: false)
                return []
            },
            DBusMethod(PassThru.cancel) { call in
                try await session.userEnd(.cancel, call: call, ownerOnly: false)
                return []
            },
            DBusMethod(PassThru.retry) { call in
                try await session.userEnd(.retry, call: call, ownerOnly: false)
                return []
            },
            DBusMethod(PassThru.openStream) { call in
                [.unixFD(try session.openStream(call))]
            },
        ], readers: [PassThru.framesCaptured.name: { .uint64(session.framesCaptured) }])
    }
}
