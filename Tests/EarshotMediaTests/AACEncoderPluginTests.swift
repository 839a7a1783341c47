@testable import EarshotMedia
import Foundation
import Testing

/// The AAC plugin is found where the build and the installation put it, and its absence
/// is an error that says where it was looked for.
@Suite struct AACEncoderPluginTests {
    @Test func theBuildsPluginLoadsFromTheExecutablesDirectory() throws {
        #expect(AACEncoderPlugin.searchDirectories.count == 2 || getenv("EARSHOT_PLUGIN_DIR") != nil)
        let address = try AACEncoderPlugin.load(from: AACEncoderPlugin.searchDirectories).get()
        #expect(address != 0)
    }

    /// The plugin is C: it must load where no Swift library is installed (the services
    /// carry the Swift runtime inside) and bind to no Swift symbol of the service.
    @Test func thePluginNeedsNoSwiftLibraryNorSymbol() throws {
        let path = try #require(AACEncoderPlugin.searchDirectories.map { $0 + "/" + AACEncoderPlugin.fileName }
            .first { access($0, F_OK) == 0 })
        let dynamic = try ExternalTools.run("readelf", ["-dW", path])
        try #require(dynamic.status == 0, "readelf -d: \(dynamic.standardError)")
        let needed = dynamic.standardOutput.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libavcodec") }, "readelf -d lists no NEEDED: \(dynamic.standardOutput)")
        #expect(!needed.contains { $0.contains("libswift") || $0.contains("libdispatch") || $0.contains("libFoundation") }, "\(needed)")
        #expect(!dynamic.standardOutput.contains("/swift/"), "a run path into the Swift toolchain: \(dynamic.standardOutput)")
        let symbols = try ExternalTools.run("readelf", ["--dyn-syms", "-W", path])
        try #require(symbols.status == 0, "readelf --dyn-syms: \(symbols.standardError)")
        let undefinedSwift = symbols.standardOutput.split(separator: "\n").compactMap { line -> Substring? in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[6] == "UND" else { return nil }
            return fields[7].hasPrefix("swift_") || fields[7].hasPrefix("_swift") || fields[7].hasPrefix("$s") ? fields[7] : nil
        }
        #expect(undefinedSwift.isEmpty, "the plugin needs Swift symbols: \(undefinedSwift)")
    }

    @Test func aMissingPluginSaysWhereItWasLookedFor() throws {
        let empty = TestDirectory()
        let result = AACEncoderPlugin.load(from: [empty.path])
        guard case .failure(let error) = result else {
            Issue.record("loaded a plugin from an empty directory")
            return
        }
        #expect(error.kind == .io)
        #expect(error.message.contains("AAC encoding is unavailable"))
        #expect(error.message.contains(empty.path + "/libEarshotAACEncoder.so"))
    }

    @Test func aFileThatIsNotALibraryIsRefusedWithTheLoadersReason() throws {
        let directory = TestDirectory()
        _ = directory.write("libEarshotAACEncoder.so", Array("not a library".utf8))
        let result = withExtendedLifetime(directory) { AACEncoderPlugin.load(from: [directory.path]) }
        guard case .failure(let error) = result else {
            Issue.record("loaded a text file as the plugin")
            return
        }
        #expect(error.message.contains("cannot load \(directory.path)/libEarshotAACEncoder.so"))
    }
}
