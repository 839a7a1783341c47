import ContractCore
@testable import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// The rest of each service through the typed client: user actions, streams, assets,
/// lineage, change signals and typed errors, against the real services.
@Suite struct CompleteClientTests {
    static func earshot(_ stack: ServiceStack) -> Earshot { Earshot(connection: stack.client) }

    /// The error codes are the contract's error names, no more and no fewer.
    @Test func everyDeclaredErrorHasACode() {
        let declared = Set(EarshotContract.errorMeanings.map(\.name))
        let coded = Set(EarshotError.Code.allCases.compactMap(\.errorName))
            .subtracting([DBusError.prefix + "Failed", DBusError.prefix + "NoReply"])
        #expect(coded == declared)
        for name in declared { #expect(EarshotError(name: name, message: "").code.errorName == name) }
        #expect(EarshotError(name: DBusError.prefix + "ServiceUnknown", message: "").code == .serviceMissing)
        #expect(EarshotError(name: "org.example.Unheard", message: "").code == .other)
    }

    /// PieceMetadata has a field for every metadata key of the contract (which RecordPiece
    /// passes on to Drop): a key added there and not here fails.
    @Test func pieceMetadataCoversEveryMetadataKey() {
        let metadata = RequestCoverageTests.fullMetadata
        let piece = PieceDrop(title: "t", mixStem: .path("/m.wav"), metadata: metadata)
        let sent = Set(piece.values.keys)
        let keys = PiecesContract.Manager.self
        #expect(sent == Set(keys.metadataKeys.map(\.name) + [keys.PieceKeys.title.name, keys.PieceKeys.mixStem.path.name]))
    }

    @Test func aStreamedPassThruIsReadFromItsPipeAndEndedByTheUser() async throws {
        try await ServiceStack.with(["earshot-capture"]) { stack in
            let earshot = Self.earshot(stack)
            var request = AudioPassThruRequest(maxDurationMs: 3000)
            request.delivery = .stream
            let passThru = try await earshot.capture.perform(request)
            let stream = try await passThru.openStream()
            var bytes: [UInt8] = []
            for await block in stream { bytes += block }
            let result = try await passThru.result
            #expect(result.resultCode == .success && result.reason == .timeout)
            // Opened at once: the microphone's first 3 s from the chunk under way when it
            // opened (the first, unless this machine is very busy), exactly.
            let heard = Array(stack.microphone.prefix(96000))
            #expect(bytes.count >= 32000 && bytes.count % 3200 == 0 && bytes[...] == heard.suffix(bytes.count), "\(bytes.count) bytes")
            #expect(try await passThru.state() == .finished)
            #expect(try await earshot.capture.active() == nil)
            #expect(try await earshot.capture.capabilities().contains(CaptureCapability(samplingRate: 16000, bitsPerSample: 16, audioType: "PCM",
                                                                                         noiseSuppression: ["off", "moderate", "high"], bargeIn: true)))

            request.maxDurationMs = 60_000
            request.delivery = .signals
            let done = try await earshot.capture.perform(request)
            for await chunk in done where chunk.sequence == 1 { break }
            #expect(try await earshot.capture.active() == done.path)
            let endsAt = try #require(try await earshot.capture.endsAtMonotonicUs())
            #expect(endsAt > Self.monotonicNow())
            try await done.done()
            #expect(try await done.result.reason == .done)

            let retried = try await earshot.capture.perform(request)
            for await chunk in retried where chunk.sequence == 0 { break }
            try await retried.retry()
            let again = try await retried.result
            #expect(again.resultCode == .retry && again.success)

            let ended = try await earshot.capture.perform(request)
            for await chunk in ended where chunk.sequence == 0 { break }
            try await earshot.capture.endActive()
            #expect(try await ended.result.reason == .end)
            let nothing = await #expect(throws: EarshotError.self) { try await earshot.capture.endActive() }
            #expect(nothing?.code == .earshot(.rejected))
        }
    }

    @Test func anAlertIsPressedDismissedAndCancelled() async throws {
        try await ServiceStack.with(["earshot-alerts"]) { stack in
            let earshot = Self.earshot(stack)
            let buttons = Alert(text: "Incoming call", softButtons: [Alert.SoftButton(id: 7, text: "Answer"), Alert.SoftButton(id: 8, text: "Decline")])
            let pressed = try await earshot.alerts.show(buttons)
            try await pressed.pressButton(8)
            let answer = try await pressed.result
            #expect(answer.resultCode == .success && answer.pressedButton == 8 && answer.reason == .button && !answer.focusRequested)

            // A STEAL_FOCUS button: the result asks the application to take the focus.
            var open = Alert.SoftButton(id: 9, text: "Open")
            open.systemAction = .stealFocus
            open.type = .text
            // (COMMUNICATION: four NORMAL alerts a minute are this caller's, and the rest use them.)
            var message = Alert(text: "Message", softButtons: [open])
            message.priority = .communication
            let stolen = try await earshot.alerts.show(message)
            try await stolen.pressButton(9)
            let focus = try await stolen.result
            #expect(focus.pressedButton == 9 && focus.focusRequested, "\(focus)")
            #expect(try await stolen.read(.state) == .finished)

            let dismissed = try await earshot.alerts.show(buttons)
            try await dismissed.dismiss()
            #expect(try await dismissed.result.reason == .dismissed)

            let cancelled = try await earshot.alerts.show(buttons)
            try await cancelled.cancel()
            let withdrawn = try await cancelled.result
            #expect(withdrawn.resultCode == .aborted && !withdrawn.success)
            let late = await #expect(throws: EarshotError.self) { try await cancelled.dismiss() }
            #expect(late?.code == .earshot(.rejected))

            let unknown = try await earshot.alerts.show(buttons)
            let noSuchButton = await #expect(throws: EarshotError.self) { try await unknown.pressButton(99) }
            #expect(noSuchButton?.code == .earshot(.invalidData))
            try await unknown.cancel()
        }
    }

    /// A KEEP_CONTEXT button: the press is a ButtonPressed signal and the alert stays.
    @Test func aKeepContextPressIsFollowed() async throws {
        try await ServiceStack.with(["earshot-alerts"]) { stack in
            let earshot = Self.earshot(stack)
            var details = Alert.SoftButton(id: 3, text: "Details")
            details.systemAction = .keepContext
            let kept = try await earshot.alerts.show(Alert(text: "Route ready", softButtons: [details]))
            var presses = try await kept.buttonPresses().makeAsyncIterator()
            try await kept.pressButton(3)
            #expect(await presses.next() == 3)
            #expect(try await kept.read(.resultCode) == nil)
            try await kept.dismiss()
            #expect(try await kept.result.reason == .dismissed)
        }
    }

    /// The orchestrator's ServiceChanged, as a sequence: a service leaving and coming back.
    @Test func serviceChangesAreFollowed() async throws {
        try await ServiceStack.with(["earshot-orchestrator", "earshot-pieces"]) { stack in
            let earshot = Self.earshot(stack)
            var changes = try await earshot.orchestrator.serviceChanges().makeAsyncIterator()
            let pieces = try #require(stack.process(PiecesContract.service.executable))
            pieces.stop()
            var seen: ServiceChange?
            repeat { seen = await changes.next() } while seen != nil && seen?.name != PiecesContract.busName
            #expect(seen == ServiceChange(name: PiecesContract.busName, running: false))
        }
    }

    @Test func piecesAreReadAsFilesFollowedAndDeleted() async throws {
        try await ServiceStack.with(["earshot-pieces"]) { stack in
            let earshot = Self.earshot(stack)
            let changes = try await earshot.pieces.changes()
            let wav = stack.file("riff.wav")
            let pcm = Array(stack.microphone.prefix(32000))
            let file = PCMWave.header(sampleRate: 16000, channels: 1, bitsPerSample: 16, dataBytes: UInt64(pcm.count)) + pcm
            try Data(file).write(to: wav)
            let first = try await earshot.pieces.drop(PieceDrop(title: "Riff", mixStemPath: wav.path))
            var second = PieceDrop(title: "Riff again", mixStemPath: wav.path)
            second.basedOn = [first]
            let derived = try await earshot.pieces.drop(second)

            let lineage = try await earshot.pieces.lineage(derived)
            #expect(lineage.ancestors == [first] && lineage.descendants == [])
            #expect(try await earshot.pieces.lineage(first).descendants == [derived])

            let fd = try await earshot.pieces.openMixStem(first)
            #expect(Self.readAll(try #require(fd.take())) == file)
            let flac = try await earshot.pieces.openMixStem(first, format: .flac)
            #expect(Self.readAll(try #require(flac.take())).starts(with: Array("fLaC".utf8)))
            let exported = stack.file("exported.wav")
            try await earshot.pieces.exportMixStem(first, to: exported.path)
            #expect(try Array(Data(contentsOf: exported)) == file)
            let noCover = await #expect(throws: EarshotError.self) { _ = try await earshot.pieces.openCoverImage(first) }
            #expect(noCover?.code == .earshot(.assetNotFound))

            try await earshot.pieces.delete(derived)
            let gone = await #expect(throws: EarshotError.self) { _ = try await earshot.pieces.get(derived) }
            #expect(gone?.code == .earshot(.pieceNotFound))

            var seen: [PieceChange] = []
            for await change in changes {
                seen.append(change)
                if seen.count == 3 { break }
            }
            #expect(seen.count == 3)
            guard seen.count == 3 else { return }
            if case .dropped(let id, let summary) = seen[0] {
                #expect(id == first && summary[PiecesContract.Manager.PieceKeys.title]?.stringValue == "Riff")
            } else {
                Issue.record("first change: \(seen[0])")
            }
            if case .dropped(let id, _) = seen[1] { #expect(id == derived) } else { Issue.record("second change: \(seen[1])") }
            #expect(seen[2] == .deleted(id: derived))
        }
    }

    static func readAll(_ fd: Int32) -> [UInt8] {
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return bytes }
            bytes += buffer[0..<count]
        }
    }

    static func monotonicNow() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
