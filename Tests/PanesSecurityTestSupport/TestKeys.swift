import Foundation

/// A private key and its public half, PEM text.
public struct TestKeyPair: Sendable {
    public let privatePEM: String
    public let publicPEM: String
}

/// Keys made at test time with the `openssl` command (Debian's `openssl` package), so no private
/// key is ever committed. Each is made once per test process, on first use.
public enum TestKeys {
    public static let rsa = generate("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")
    public static let otherRSA = generate("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048")
    public static let weakRSA = generate("-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024")
    public static let ec = generate("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
    public static let ecP384 = generate("-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384")
    public static let ed25519 = generate("-algorithm", "ED25519")

    /// An HS256 secret of 40 bytes.
    public static let secret = "test-secret-0123456789-abcdefghijklmnopq"

    static func generate(_ options: String...) -> TestKeyPair {
        let privatePEM = openssl(["genpkey"] + options, input: nil)
        let publicPEM = openssl(["pkey", "-pubout"], input: privatePEM)
        return TestKeyPair(privatePEM: privatePEM, publicPEM: publicPEM)
    }

    /// Runs `openssl` and returns what it printed; a failure stops the tests with its message.
    public static func openssl(_ arguments: [String], input: String?) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        do { try process.run() } catch { fatalError("cannot run /usr/bin/openssl (Debian package `openssl`): \(error)") }
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try? stdin.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            fatalError("openssl \(arguments.joined(separator: " ")) failed: \(message)")
        }
        return text
    }
}
