import ContractCore
import EarshotContract
import EarshotDBus

// Every declared property, typed, per client type; and the types that stand for objects.

extension ObjectProperty where Object == CaptureProxy {
    private typealias Members = CaptureContract.Manager
    public static var capabilities: ObjectProperty<CaptureProxy, [[String: DBusValue]]> { .init(Members.interface, Members.capabilities, decode: PropertyDecoding.dictionaries) }
    public static var device: ObjectProperty<CaptureProxy, String> { .init(Members.interface, Members.device, decode: PropertyDecoding.string) }
    public static var active: ObjectProperty<CaptureProxy, ObjectPath?> { .init(Members.interface, Members.active, decode: PropertyDecoding.object) }
    public static var endsAtMonotonicUs: ObjectProperty<CaptureProxy, UInt64> { .init(Members.interface, Members.endsAtMonotonicUs, decode: PropertyDecoding.uint64) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(capabilities), .init(device), .init(active), .init(endsAtMonotonicUs)] }
}

extension CaptureProxy: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: ObjectPath(declared: CaptureContract.managerPath), interface: CaptureContract.Manager.interface) }
}

extension ObjectProperty where Object == PassThruControl {
    private typealias Members = CaptureContract.PassThru
    public static var state: ObjectProperty<PassThruControl, PassThruState> { .init(Members.interface, Members.state, decode: { $0.stringValue.map(PassThruState.init(reported:)) }) }
    public static var owner: ObjectProperty<PassThruControl, String> { .init(Members.interface, Members.owner, decode: PropertyDecoding.string) }
    public static var samplingRate: ObjectProperty<PassThruControl, UInt32> { .init(Members.interface, Members.samplingRate, decode: PropertyDecoding.uint32) }
    public static var bitsPerSample: ObjectProperty<PassThruControl, UInt32> { .init(Members.interface, Members.bitsPerSample, decode: PropertyDecoding.uint32) }
    public static var channels: ObjectProperty<PassThruControl, UInt32> { .init(Members.interface, Members.channels, decode: PropertyDecoding.uint32) }
    public static var maxDuration: ObjectProperty<PassThruControl, UInt32> { .init(Members.interface, Members.maxDuration, decode: PropertyDecoding.uint32) }
    public static var displayText1: ObjectProperty<PassThruControl, String> { .init(Members.interface, Members.displayText1, decode: PropertyDecoding.string) }
    public static var displayText2: ObjectProperty<PassThruControl, String> { .init(Members.interface, Members.displayText2, decode: PropertyDecoding.string) }
    public static var framesCaptured: ObjectProperty<PassThruControl, UInt64> { .init(Members.interface, Members.framesCaptured, decode: PropertyDecoding.uint64) }
    public static var endsAtMonotonicUs: ObjectProperty<PassThruControl, UInt64> { .init(Members.interface, Members.endsAtMonotonicUs, decode: PropertyDecoding.uint64) }
    public static var resultCode: ObjectProperty<PassThruControl, ResultCode?> { .init(Members.interface, Members.resultCode, decode: PropertyDecoding.resultCode) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(state), .init(owner), .init(samplingRate), .init(bitsPerSample), .init(channels), .init(maxDuration), .init(displayText1), .init(displayText2), .init(framesCaptured), .init(endsAtMonotonicUs), .init(resultCode)] }
}

extension PassThruControl: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: CaptureContract.PassThru.interface) }
}

extension ObjectProperty where Object == AlertsProxy {
    private typealias Members = AlertsContract.Manager
    public static var defaultTimeout: ObjectProperty<AlertsProxy, Double> { .init(Members.interface, Members.defaultTimeout, decode: PropertyDecoding.double, encode: { .double($0) }) }
    public static var buttonTimeout: ObjectProperty<AlertsProxy, Double> { .init(Members.interface, Members.buttonTimeout, decode: PropertyDecoding.double, encode: { .double($0) }) }
    public static var displayLines: ObjectProperty<AlertsProxy, UInt32> { .init(Members.interface, Members.displayLines, decode: PropertyDecoding.uint32, encode: { .uint32($0) }) }
    public static var current: ObjectProperty<AlertsProxy, ObjectPath?> { .init(Members.interface, Members.current, decode: PropertyDecoding.object) }
    public static var queueLength: ObjectProperty<AlertsProxy, UInt32> { .init(Members.interface, Members.queueLength, decode: PropertyDecoding.uint32) }
    public static var capabilities: ObjectProperty<AlertsProxy, [String: DBusValue]> { .init(Members.interface, Members.capabilities, decode: PropertyDecoding.dictionary) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(defaultTimeout), .init(buttonTimeout), .init(displayLines), .init(current), .init(queueLength), .init(capabilities)] }
}

extension AlertsProxy: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: ObjectPath(declared: AlertsContract.managerPath), interface: AlertsContract.Manager.interface) }
}

extension ObjectProperty where Object == AlertControl {
    private typealias Members = AlertsContract.Alert
    public static var state: ObjectProperty<AlertControl, AlertState> { .init(Members.interface, Members.state, decode: { $0.stringValue.map(AlertState.init(reported:)) }) }
    public static var owner: ObjectProperty<AlertControl, String> { .init(Members.interface, Members.owner, decode: PropertyDecoding.string) }
    public static var lines: ObjectProperty<AlertControl, [String]> { .init(Members.interface, Members.lines, decode: PropertyDecoding.strings) }
    public static var softButtons: ObjectProperty<AlertControl, [[String: DBusValue]]> { .init(Members.interface, Members.softButtons, decode: PropertyDecoding.dictionaries) }
    public static var priority: ObjectProperty<AlertControl, Alert.Priority> { .init(Members.interface, Members.priority, decode: { $0.stringValue.flatMap(Alert.Priority.init(rawValue:)) }) }
    public static var showWaitIndicator: ObjectProperty<AlertControl, Bool> { .init(Members.interface, Members.showWaitIndicator, decode: PropertyDecoding.boolean) }
    public static var icon: ObjectProperty<AlertControl, String> { .init(Members.interface, Members.icon, decode: PropertyDecoding.string) }
    public static var resultCode: ObjectProperty<AlertControl, ResultCode?> { .init(Members.interface, Members.resultCode, decode: PropertyDecoding.resultCode) }
    public static var tryAgainTimeMs: ObjectProperty<AlertControl, UInt32> { .init(Members.interface, Members.tryAgainTimeMs, decode: PropertyDecoding.uint32) }
    public static var endsAtMonotonicUs: ObjectProperty<AlertControl, UInt64> { .init(Members.interface, Members.endsAtMonotonicUs, decode: PropertyDecoding.uint64) }
    public static var startedAtMonotonicUs: ObjectProperty<AlertControl, UInt64> { .init(Members.interface, Members.startedAtMonotonicUs, decode: PropertyDecoding.uint64) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(state), .init(owner), .init(lines), .init(softButtons), .init(priority), .init(showWaitIndicator), .init(icon), .init(resultCode), .init(tryAgainTimeMs), .init(endsAtMonotonicUs), .init(startedAtMonotonicUs)] }
}

extension AlertControl: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: AlertsContract.Alert.interface) }
}

extension ObjectProperty where Object == PiecesProxy {
    private typealias Members = PiecesContract.Manager
    public static var count: ObjectProperty<PiecesProxy, UInt32> { .init(Members.interface, Members.count, decode: PropertyDecoding.uint32) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(count)] }
}

extension PiecesProxy: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: PiecesContract.Manager.interface) }
}

extension ObjectProperty where Object == SessionProxy {
    private typealias Members = SessionContract.Manager
    public static var keepEnforced: ObjectProperty<SessionProxy, Bool> { .init(Members.interface, Members.keepEnforced, decode: PropertyDecoding.boolean, encode: { .boolean($0) }) }
    public static var desiredState: ObjectProperty<SessionProxy, [String: DBusValue]> { .init(Members.interface, Members.desiredState, decode: PropertyDecoding.dictionary) }
    public static var mixer: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.mixer, decode: PropertyDecoding.string) }
    public static var duckLevel: ObjectProperty<SessionProxy, Double> { .init(Members.interface, Members.duckLevel, decode: PropertyDecoding.double, encode: { .double($0) }) }
    public static var streams: ObjectProperty<SessionProxy, [[String: DBusValue]]> { .init(Members.interface, Members.streams, decode: PropertyDecoding.dictionaries) }
    public static var category: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.category, decode: PropertyDecoding.string) }
    public static var mode: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.mode, decode: PropertyDecoding.string) }
    public static var options: ObjectProperty<SessionProxy, [String]> { .init(Members.interface, Members.options, decode: PropertyDecoding.strings) }
    public static var active: ObjectProperty<SessionProxy, Bool> { .init(Members.interface, Members.active, decode: PropertyDecoding.boolean) }
    public static var sampleRate: ObjectProperty<SessionProxy, Double> { .init(Members.interface, Members.sampleRate, decode: PropertyDecoding.double) }
    public static var ioBufferDuration: ObjectProperty<SessionProxy, Double> { .init(Members.interface, Members.ioBufferDuration, decode: PropertyDecoding.double) }
    public static var preferredInput: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.preferredInput, decode: PropertyDecoding.string) }
    public static var dataSourceName: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.dataSourceName, decode: PropertyDecoding.string) }
    public static var polarPattern: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.polarPattern, decode: PropertyDecoding.string) }
    public static var inputOrientation: ObjectProperty<SessionProxy, String> { .init(Members.interface, Members.inputOrientation, decode: PropertyDecoding.string) }
    public static var channels: ObjectProperty<SessionProxy, UInt32> { .init(Members.interface, Members.channels, decode: PropertyDecoding.uint32) }
    public static var route: ObjectProperty<SessionProxy, [String: DBusValue]> { .init(Members.interface, Members.route, decode: PropertyDecoding.dictionary) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(keepEnforced), .init(desiredState), .init(mixer), .init(duckLevel), .init(streams), .init(category), .init(mode), .init(options), .init(active), .init(sampleRate), .init(ioBufferDuration), .init(preferredInput), .init(dataSourceName), .init(polarPattern), .init(inputOrientation), .init(channels), .init(route)] }
}

extension SessionProxy: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: SessionContract.Manager.interface) }
}

extension ObjectProperty where Object == SessionActivation {
    private typealias Members = SessionContract.Activation
    public static var owner: ObjectProperty<SessionActivation, String> { .init(Members.interface, Members.owner, decode: PropertyDecoding.string) }
    public static var category: ObjectProperty<SessionActivation, String> { .init(Members.interface, Members.category, decode: PropertyDecoding.string) }
    public static var mode: ObjectProperty<SessionActivation, String> { .init(Members.interface, Members.mode, decode: PropertyDecoding.string) }
    public static var options: ObjectProperty<SessionActivation, [String]> { .init(Members.interface, Members.options, decode: PropertyDecoding.strings) }
    public static var state: ObjectProperty<SessionActivation, ActivationState> { .init(Members.interface, Members.state, decode: { $0.stringValue.map(ActivationState.init(reported:)) }) }
    public static var ducked: ObjectProperty<SessionActivation, Bool> { .init(Members.interface, Members.ducked, decode: PropertyDecoding.boolean) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(owner), .init(category), .init(mode), .init(options), .init(state), .init(ducked)] }
}

extension SessionActivation: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: SessionContract.Activation.interface) }
}

extension ObjectProperty where Object == OrchestratorProxy {
    private typealias Members = OrchestratorContract.Manager
    public static var services: ObjectProperty<OrchestratorProxy, [String: ServiceHealth]> { .init(Members.interface, Members.services, decode: PropertyDecoding.services) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(services)] }
}

extension OrchestratorProxy: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: OrchestratorContract.Manager.interface) }
}

extension ObjectProperty where Object == JobControl {
    private typealias Members = OrchestratorContract.Job
    public static var state: ObjectProperty<JobControl, JobState> { .init(Members.interface, Members.state, decode: { $0.stringValue.map(JobState.init(reported:)) }) }
    public static var pieceId: ObjectProperty<JobControl, String> { .init(Members.interface, Members.pieceId, decode: PropertyDecoding.string) }
    public static var resultCode: ObjectProperty<JobControl, ResultCode?> { .init(Members.interface, Members.resultCode, decode: PropertyDecoding.resultCode) }
    public static var framesCaptured: ObjectProperty<JobControl, UInt64> { .init(Members.interface, Members.framesCaptured, decode: PropertyDecoding.uint64) }
    public static var title: ObjectProperty<JobControl, String> { .init(Members.interface, Members.title, decode: PropertyDecoding.string) }
    public static var owner: ObjectProperty<JobControl, String> { .init(Members.interface, Members.owner, decode: PropertyDecoding.string) }
    /// Every property above: each must be this object's to be listed, and the list is held to
    /// the interface's declarations (`ObjectPropertyTests`).
    static var declared: [ListedProperty<Object>] { [.init(state), .init(pieceId), .init(resultCode), .init(framesCaptured), .init(title), .init(owner)] }
}

extension JobControl: EarshotObject {
    public var propertyAccess: PropertyAccess { PropertyAccess(calls: calls, path: path, interface: OrchestratorContract.Job.interface) }
}

extension Job {
    /// A property of this job (those of `JobControl`).
    public func read<Value>(_ property: ObjectProperty<JobControl, Value>) async throws -> Value {
        try await JobControl(path: path, calls: calls).read(property)
    }

    public func observe<Value>(_ property: ObjectProperty<JobControl, Value>) async throws -> AsyncStream<Value?> {
        try await JobControl(path: path, calls: calls).observe(property)
    }
}

extension PassThru {
    /// A property of this pass-thru (those of `PassThruControl`).
    public func read<Value>(_ property: ObjectProperty<PassThruControl, Value>) async throws -> Value {
        try await PassThruControl(path: path, calls: calls).read(property)
    }

    public func observe<Value>(_ property: ObjectProperty<PassThruControl, Value>) async throws -> AsyncStream<Value?> {
        try await PassThruControl(path: path, calls: calls).observe(property)
    }
}

extension PresentedAlert {
    /// A property of this alert (those of `AlertControl`).
    public func read<Value>(_ property: ObjectProperty<AlertControl, Value>) async throws -> Value {
        try await AlertControl(path: path, calls: calls).read(property)
    }

    public func observe<Value>(_ property: ObjectProperty<AlertControl, Value>) async throws -> AsyncStream<Value?> {
        try await AlertControl(path: path, calls: calls).observe(property)
    }
}
