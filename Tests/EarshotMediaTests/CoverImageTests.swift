import EarshotMedia
import Foundation
import Testing

@Suite struct CoverImageTests {
    let directory = TestDirectory()

    func inspectionError(_ path: String) -> MediaError? {
        do {
            _ = try CoverImage.inspect(path: path)
            return nil
        } catch {
            return error
        }
    }

    /// Red images of the given names and sizes, made by one ffmpeg run.
    func images(_ specs: [(name: String, width: Int, height: Int)]) throws -> [String] {
        var arguments: [String] = []
        for spec in specs {
            // The colour source makes yuv420p, which would round odd sizes down; RGB keeps them.
            let format = spec.name.hasSuffix(".png") ? ",format=rgb24" : ""
            arguments += ["-f", "lavfi", "-i", "color=c=red:s=\(spec.width)x\(spec.height)\(format)"]
        }
        for (index, spec) in specs.enumerated() {
            arguments += ["-map", "\(index)", "-frames:v", "1", directory.file(spec.name)]
        }
        try ExternalTools.ffmpeg(arguments)
        return specs.map { directory.file($0.name) }
    }

    @Test func pngAndJpegFromFFmpeg() throws {
        let paths = try images([("square.png", 640, 640), ("square.jpg", 640, 640),
                                ("wide.png", 641, 640), ("tall.jpg", 320, 642)])
        let png = try CoverImage.inspect(path: paths[0])
        #expect(png.kind == .png && png.width == 640 && png.height == 640)
        let jpeg = try CoverImage.inspect(path: paths[1])
        #expect(jpeg.kind == .jpeg && jpeg.width == 640 && jpeg.height == 640)
        let wide = try CoverImage.inspect(path: paths[2])
        #expect(wide.kind == .png && wide.width == 641 && wide.height == 640)
        let tall = try CoverImage.inspect(path: paths[3])
        #expect(tall.kind == .jpeg && tall.width == 320 && tall.height == 642)
    }

    /// SOI, fill bytes, a large APP1 segment, a DHT, then SOF2 (progressive).
    @Test func jpegSegmentsAreWalked() throws {
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xFF, 0xE1, 0xEA, 0x60]
        bytes += [UInt8](repeating: 0x45, count: 0xEA60 - 2)
        bytes += [0xFF, 0xC4, 0x00, 0x03, 0x00]
        bytes += [0xFF, 0xC2, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03,
                  0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        let path = directory.write("progressive.jpg", bytes)
        let found = try CoverImage.inspect(path: path)
        #expect(found.kind == .jpeg && found.width == 640 && found.height == 480)
    }

    @Test func refusesGarbageAndDamage() throws {
        let paths = try images([("good.png", 64, 64), ("good.jpg", 64, 64)])
        let png = directory.read(paths[0])
        let jpeg = directory.read(paths[1])
        var badCRC = png
        badCRC[19] ^= 0x01 // width's low byte, under the IHDR CRC
        let cases: [String: [UInt8]] = [
            "garbage.png": Array("GIF89a is not welcome here".utf8),
            "empty.png": [],
            "short.png": Array(png.prefix(20)),
            "crc.png": badCRC,
            "short.jpg": Array(jpeg.prefix(30)),
            "soi-only.jpg": [0xFF, 0xD8],
            "eoi.jpg": [0xFF, 0xD8, 0xFF, 0xD9],
            "scan-first.jpg": [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02],
            "no-marker.jpg": [0xFF, 0xD8, 0x12, 0x34, 0x56],
        ]
        for (name, bytes) in cases {
            let error = inspectionError(directory.write(name, bytes))
            #expect(error?.kind == .invalidImage, "\(name): \(String(describing: error))")
        }
        #expect(inspectionError(directory.file("missing.png"))?.kind == .io)
    }
}
