/// Reed–Solomon error correction over GF(2⁸) as QR codes use it (ISO/IEC 18004 §7.5.2):
/// the field's primitive polynomial is x⁸ + x⁴ + x³ + x² + 1 (0x11D), α = 2, and the
/// generator of degree n is (x − α⁰)(x − α¹)…(x − αⁿ⁻¹).
enum ReedSolomon {
    /// αⁱ for i in 0..<255, and the logarithm of each non-zero element.
    static let (exponents, logarithms): ([UInt8], [UInt8]) = {
        var exponents = [UInt8](repeating: 0, count: 255)
        var logarithms = [UInt8](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exponents[power] = UInt8(value)
            logarithms[value] = UInt8(power)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        return (exponents, logarithms)
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        guard a != 0, b != 0 else { return 0 }
        return exponents[(Int(logarithms[Int(a)]) + Int(logarithms[Int(b)])) % 255]
    }

    /// The generator polynomial's coefficients below its leading 1, highest power first.
    static func generator(degree: Int) -> [UInt8] {
        // Start from 1 and multiply by (x − αⁱ) for each i; in GF(2⁸) subtraction is addition.
        var coefficients: [UInt8] = [1]
        for power in 0..<degree {
            var next = [UInt8](repeating: 0, count: coefficients.count + 1)
            for (index, coefficient) in coefficients.enumerated() {
                next[index] ^= coefficient
                next[index + 1] ^= multiply(coefficient, exponents[power])
            }
            coefficients = next
        }
        return Array(coefficients.dropFirst())
    }

    /// The error-correction codewords of `data`: the remainder of data(x)·xⁿ divided by
    /// the generator of degree n.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            for index in generator.indices { remainder[index] ^= multiply(generator[index], factor) }
        }
        return remainder
    }
}
