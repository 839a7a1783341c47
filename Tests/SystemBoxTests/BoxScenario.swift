import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// What the scenarios share: the box, busctl as one of its users, the microphone, and what
/// the speakers play.
enum BoxScenario {
    /// The box `deploy/earshot-dev test-system` booted; the suite runs only inside that.
    static var box: SystemBox { SystemBox.current! }
    static var isBooted: Bool { SystemBox.current != nil }

    /// `busctl --system` with `arguments` (already quoted for the shell) as `user`.
    @discardableResult
    static func busctl(_ arguments: String, as user: String) async throws -> String {
        try await box.run("busctl --system \(arguments)", as: user)
    }

    /// A property of an object, as busctl prints it (`s "finished"`).
    static func property(_ service: String, _ path: String, _ interface: String, _ property: PropertyDeclaration,
                         as user: String) async throws -> String {
        try await busctl("get-property \(service) \(path) \(interface) \(property.name)", as: user)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The quoted string of a busctl reply line such as `o "/org/earshot/Capture1/PassThru/3"`.
    static func quoted(_ reply: String) throws -> String {
        let parts = reply.split(separator: "\"", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { throw HarnessError("no quoted value in '\(reply)'") }
        return String(parts[1])
    }

    /// Runs `body` while `file` (a path in the box) plays into the box's microphone, from
    /// when WirePlumber has made it the default source. The microphone is the box's
    /// hardware: root plays it (a user's program may not make a source on the head unit's
    /// PipeWire).
    static func feedingMicrophone<T>(_ file: String, _ body: () async throws -> T) async throws -> T {
        try await box.with("/usr/local/lib/earshot-box/feed-microphone \(file)", as: "root", name: "microphone") { _ in
            try await box.waitUntil("wpctl inspect @DEFAULT_AUDIO_SOURCE@ | grep -q 'node.name = \"box-microphone\"'")
            return try await body()
        }
    }

    /// The samples of a 16-bit mono WAV file on the host.
    static func samples(ofWave url: URL) throws -> [Int16] {
        let bytes = [UInt8](try Data(contentsOf: url))
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if id == "data" {
                let end = min(bytes.count, offset + 8 + size)
                return stride(from: offset + 8, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
            }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("\(url.path) has no data chunk")
    }

    /// How `excerpt`, placed at `place` in `whole`, departs from it, or nil when every
    /// sample from there on is `whole`'s: where it first differs, by how much, and whether
    /// what follows is `whole`'s again further on (samples missing) or earlier (repeated).
    static func difference(_ excerpt: [Int16], from whole: [Int16], at place: (excerptStart: Int, wholeStart: Int)) -> String? {
        let length = min(excerpt.count - place.excerptStart, whole.count - place.wholeStart)
        let mismatches = (0..<length).filter { excerpt[place.excerptStart + $0] != whole[place.wholeStart + $0] }
        guard let first = mismatches.first else { return nil }
        let largest = mismatches.map { abs(Int(excerpt[place.excerptStart + $0]) - Int(whole[place.wholeStart + $0])) }.max() ?? 0
        var text = "\(place.excerptStart) silent samples first, then \(first) equal ones; from there \(mismatches.count) of \(length - first) "
            + "samples differ, by at most \(largest)"
        let resume = place.excerptStart + first
        if resume + 64 <= excerpt.count, let again = Self.place(Array(excerpt[resume...]), in: whole) {
            let jump = again.wholeStart - again.excerptStart - (place.wholeStart + first)
            text += "; what follows is the microphone's again \(abs(jump)) samples \(jump >= 0 ? "further on (missing)" : "earlier (repeated)")"
                + " after \(again.excerptStart) silent samples"
        }
        return text
    }

    /// Where one run of `whole`'s samples in an excerpt ends and the next begins: `missing`
    /// samples of `whole` are not in the excerpt, and `silent` samples of silence are in their
    /// stead or between.
    struct Gap: Equatable, CustomStringConvertible {
        let missing: Int
        let silent: Int
        var description: String { "\(missing) missing, \(silent) silent" }
    }

    /// `excerpt`, placed at `place` in `whole`, as runs of `whole`'s samples in their order,
    /// with nothing but silence between them: the gaps between the runs, and nil for
    /// `difference`; or, when a run ends in anything else (a sample altered, another sound,
    /// samples repeated), what `difference` says of the run it ends.
    static func gaps(_ excerpt: [Int16], of whole: [Int16], at place: (excerptStart: Int, wholeStart: Int))
        -> (gaps: [Gap], difference: String?) {
        var run = place
        var gaps: [Gap] = []
        while true {
            let length = min(excerpt.count - run.excerptStart, whole.count - run.wholeStart)
            guard let equal = (0..<length).first(where: { excerpt[run.excerptStart + $0] != whole[run.wholeStart + $0] }) else {
                return (gaps, nil)
            }
            // The next run starts after the first sample that differs and the silence after
            // it, at the same place in `whole` or further on.
            let resume = run.excerptStart + equal
            let expected = run.wholeStart + equal
            guard gaps.count < 16, resume + 64 <= excerpt.count,
                  let again = Self.place(Array(excerpt[resume...]), in: whole, from: expected) else {
                let text = difference(excerpt, from: whole, at: run) ?? ""
                return (gaps, gaps.isEmpty ? text : "after gaps of \(gaps): \(text)")
            }
            gaps.append(Gap(missing: again.wholeStart - expected, silent: again.excerptStart))
            run = (resume + again.excerptStart, again.wholeStart)
        }
    }

    /// Where `excerpt` (past its leading silence) lies in `whole`, at `start` or later: the
    /// offset of its first sound in `whole`, or nil when its samples are not a run of `whole`'s.
    static func place(_ excerpt: [Int16], in whole: [Int16], from start: Int = 0) -> (excerptStart: Int, wholeStart: Int)? {
        guard let first = excerpt.firstIndex(where: { $0 != 0 }), excerpt.count - first >= 64 else { return nil }
        let probe = Array(excerpt[first..<first + 64])
        var index = max(0, start)
        while index + probe.count <= whole.count {
            if whole[index] == probe[0], Array(whole[index..<index + probe.count]) == probe { return (first, index) }
            index += 1
        }
        return nil
    }
}

/// The radio and the speakers: a tone played as another user's Music stream, and what the
/// speakers' monitor hears of it.
enum BoxAudio {
    /// The radio's frequency: far above speech, so that it is measured apart from alerts.
    static let radioHertz = 12000

    /// Runs `body` while `user` plays a tone at `radioHertz` (half scale) as a Music
    /// stream, the head unit's radio; waits until the session sees it and the speakers play
    /// it at a steady level.
    static func withRadio<T>(as user: String, _ body: () async throws -> T) async throws -> T {
        let box = BoxScenario.box
        try await box.run("sox -n -r 48000 -c 2 -b 16 radio.wav synth 120 sine \(radioHertz) vol 0.5", as: user)
        return try await box.with("exec pw-play --media-role Music radio.wav", as: user, name: "radio") { _ in
            try await waitForStream(role: "Music") { _ in true }
            try await untilSteady(hertz: radioHertz)
            return try await body()
        }
    }

    /// Until what the speakers play at `hertz` holds steady: two readings in a row within
    /// 0.5 dB (at most eight). A stream the session already sees may not be linked to the
    /// speakers yet: a level measured across its first moments read 1 dB low once, and the
    /// radio "came back" 1 dB louder than it had been.
    static func untilSteady(hertz: Int) async throws {
        var last = try await speakersLevel(hertz: hertz, seconds: 0.3)
        for _ in 0..<8 {
            let next = try await speakersLevel(hertz: hertz, seconds: 0.3)
            if abs(next - last) <= 0.5 { return }
            last = next
        }
        throw HarnessError("what the speakers play at \(hertz) Hz did not settle: last \(last) dB")
    }

    /// A stream as the session's `Streams` property shows it.
    struct Stream {
        let role: String
        let volume: Double
        let ducked: Bool
        let muted: Bool
    }

    /// The session's `Streams`.
    static func streams() async throws -> [Stream] {
        let json = try await BoxScenario.box.run(
            "busctl --system --json=short get-property org.earshot.Session1 /org/earshot/Session1 org.earshot.Session1 Streams")
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let entries = object?["data"] as? [[String: Any]] ?? []
        typealias Keys = SessionContract.Manager.StreamKeys
        func value(_ entry: [String: Any], _ key: OptionKey) -> Any? { (entry[key.name] as? [String: Any])?["data"] }
        return entries.map { entry in
            Stream(role: value(entry, Keys.role) as? String ?? "", volume: (value(entry, Keys.volume) as? NSNumber)?.doubleValue ?? -1,
                   ducked: (value(entry, Keys.ducked) as? NSNumber)?.boolValue ?? false,
                   muted: (value(entry, Keys.muted) as? NSNumber)?.boolValue ?? false)
        }
    }

    /// The first stream of `role` once `check` holds for it (at most `timeout`).
    @discardableResult
    static func waitForStream(role: String, timeout: Duration = .seconds(10), _ check: (Stream) -> Bool) async throws -> Stream {
        let deadline = ContinuousClock.now + timeout
        var last: [Stream] = []
        while ContinuousClock.now < deadline {
            last = try await streams()
            if let stream = last.first(where: { $0.role == role }), check(stream) { return stream }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessError("no \(role) stream as wanted in the session's Streams: \(last)")
    }

    /// The ids of the PipeWire nodes whose `media.role` is `role` (seen as root).
    static func nodes(role: String) async throws -> [Int] {
        let json = try await BoxScenario.box.run("pw-dump")
        let objects = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
        return objects.compactMap { object -> Int? in
            guard object["type"] as? String == "PipeWire:Interface:Node",
                  let props = (object["info"] as? [String: Any])?["props"] as? [String: Any],
                  props["media.role"] as? String == role else { return nil }
            return (object["id"] as? NSNumber)?.intValue
        }.sorted()
    }

    /// The level in dB (full scale) of what the speakers play at `hertz`, or of the band
    /// below 8 kHz (`hertz` nil: speech), over `seconds`, from the sink's monitor.
    static func speakersLevel(hertz: Int?, seconds: Double = 0.6) async throws -> Double {
        let box = BoxScenario.box
        let file = "/tmp/monitor-\(UUID().uuidString.prefix(6)).wav"
        let band = hertz.map { "sinc \(max($0 / 2, $0 - 500))-\($0 + 500)" } ?? "sinc -8000"
        let output = try await box.run("""
            timeout \(seconds + 0.5) pw-record --target speakers -P '{ stream.capture.sink=true }' --rate 48000 --channels 1 \(file) \
            >/dev/null 2>&1; sox \(file) -n trim 0.1 \(band) stat 2>&1 | sed -n 's/^RMS *amplitude: *//p'; rm -f \(file)
            """)
        guard let rms = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessError("no level in '\(output)'")
        }
        return rms > 0 ? 20 * log10(rms) : -200
    }
}
