import CNettle
import Foundation

/// A SCRAM-SHA-256 password verifier as PostgreSQL stores one
/// (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, RFC 5802 and 7677), made
/// here so that a new host's password is never sent to the server, nor written to its log,
/// in the clear: `CREATE ROLE … PASSWORD` given a verifier stores it as it is.
enum ScramVerifier {
    static let iterations: UInt32 = 4096

    /// The verifier of `password` (ASCII: SASLprep leaves it as it is) with `salt`.
    static func make(password: String, salt: [UInt8]) -> String {
        let secret = Array(password.utf8)
        var salted = [UInt8](repeating: 0, count: 32)
        nettle_pbkdf2_hmac_sha256(secret.count, secret, iterations, salt.count, salt, salted.count, &salted)
        let clientKey = hmac(key: salted, message: Array("Client Key".utf8))
        let serverKey = hmac(key: salted, message: Array("Server Key".utf8))
        var context = sha256_ctx()
        nettle_sha256_init(&context)
        nettle_sha256_update(&context, clientKey.count, clientKey)
        var storedKey = [UInt8](repeating: 0, count: 32)
        nettle_sha256_digest(&context, storedKey.count, &storedKey)
        func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
        return "SCRAM-SHA-256$\(iterations):\(base64(salt))$\(base64(storedKey)):\(base64(serverKey))"
    }

    static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var context = hmac_sha256_ctx()
        nettle_hmac_sha256_set_key(&context, key.count, key)
        nettle_hmac_sha256_update(&context, message.count, message)
        var digest = [UInt8](repeating: 0, count: 32)
        nettle_hmac_sha256_digest(&context, digest.count, &digest)
        return digest
    }

    /// `count` random bytes from the system's generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A new password: 32 random bytes in URL-safe base64 (no padding).
    static func newPassword() -> String {
        Data(randomBytes(32)).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
