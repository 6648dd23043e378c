package php

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// XXH128 is PHP's hash('xxh128', s): XXH3's 128-bit hash with seed 0 and the default
// secret, as 32 lowercase hex digits, high half first (XXH128_canonicalFromHash). Laravel
// 13.x names a debounced job's cache key (DebounceLock::getKey) and 12.54+ a unique job's
// lock key after the xxh128 of a job's displayName(). This is the portable scalar form of
// the reference algorithm (xxhash.h 0.8), checked against PHP for every length class.
func XXH128(s string) string {
	hi, lo := xxh3Hash128([]byte(s))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return hex.EncodeToString(b[:])
}

const (
	xxPrime32_1 = 0x9E3779B1
	xxPrime32_2 = 0x85EBCA77
	xxPrime32_3 = 0xC2B2AE3D
	xxPrime64_1 = 0x9E3779B185EBCA87
	xxPrime64_2 = 0xC2B2AE3D27D4EB4F
	xxPrime64_3 = 0x165667B19E3779F9
	xxPrime64_4 = 0x85EBCA77C2B2AE63
	xxPrime64_5 = 0x27D4EB2F165667C5
	xxPrimeMx1  = 0x165667919E3779F9
	xxPrimeMx2  = 0x9FB21C651E98DF25

	xxStripeLen          = 64
	xxSecretConsumeRate  = 8
	xxAccNB              = 8
	xxSecretSize         = 192
	xxSecretSizeMin      = 136
	xxMidSizeStartOffset = 3
	xxMidSizeLastOffset  = 17
	xxSecretLastAccStart = 7
	xxSecretMergeStart   = 11
)

// xxSecret is XXH3's default secret (kSecret).
var xxSecret = [xxSecretSize]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func rd64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) }
func rd32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }

// sec64 reads the default secret at offset i.
func sec64(i int) uint64 { return rd64(xxSecret[:], i) }

func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxPrime64_2
	h ^= h >> 29
	h *= xxPrime64_3
	h ^= h >> 32
	return h
}

func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= xxPrimeMx1
	h ^= h >> 32
	return h
}

// mulFold64 is the 128-bit product of a and b, its halves xored.
func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func mix16B(in []byte, i, s int) uint64 {
	return mulFold64(rd64(in, i)^sec64(s), rd64(in, i+8)^sec64(s+8))
}

// mix32B folds 16 bytes at i1 and 16 at i2 into the accumulator pair (XXH128_mix32B).
func mix32B(lo, hi uint64, in []byte, i1, i2, s int) (uint64, uint64) {
	lo += mix16B(in, i1, s)
	lo ^= rd64(in, i2) + rd64(in, i2+8)
	hi += mix16B(in, i2, s+16)
	hi ^= rd64(in, i1) + rd64(in, i1+8)
	return lo, hi
}

// xxh3Hash128 returns XXH3_128bits(in) as its high and low halves.
func xxh3Hash128(in []byte) (hi, lo uint64) {
	n := len(in)
	switch {
	case n == 0:
		return xxh64Avalanche(sec64(80) ^ sec64(88)), xxh64Avalanche(sec64(64) ^ sec64(72))
	case n <= 3:
		c1, c2, c3 := uint32(in[0]), uint32(in[n>>1]), uint32(in[n-1])
		combinedl := c1<<16 | c2<<24 | c3 | uint32(n)<<8
		combinedh := bits.RotateLeft32(bits.ReverseBytes32(combinedl), 13)
		bitflipl := uint64(rd32(xxSecret[:], 0) ^ rd32(xxSecret[:], 4))
		bitfliph := uint64(rd32(xxSecret[:], 8) ^ rd32(xxSecret[:], 12))
		return xxh64Avalanche(uint64(combinedh) ^ bitfliph), xxh64Avalanche(uint64(combinedl) ^ bitflipl)
	case n <= 8:
		in64 := uint64(rd32(in, 0)) + uint64(rd32(in, n-4))<<32
		keyed := in64 ^ (sec64(16) ^ sec64(24))
		mhi, mlo := bits.Mul64(keyed, xxPrime64_1+uint64(n)<<2)
		mhi += mlo << 1
		mlo ^= mhi >> 3
		mlo ^= mlo >> 35
		mlo *= xxPrimeMx2
		mlo ^= mlo >> 28
		return xxh3Avalanche(mhi), mlo
	case n <= 16:
		inLo, inHi := rd64(in, 0), rd64(in, n-8)
		mhi, mlo := bits.Mul64(inLo^inHi^(sec64(32)^sec64(40)), xxPrime64_1)
		mlo += uint64(n-1) << 54
		inHi ^= sec64(48) ^ sec64(56)
		mhi += inHi + uint64(uint32(inHi))*(xxPrime32_2-1)
		mlo ^= bits.ReverseBytes64(mhi)
		hhi, hlo := bits.Mul64(mlo, xxPrime64_2)
		hhi += mhi * xxPrime64_2
		return xxh3Avalanche(hhi), xxh3Avalanche(hlo)
	case n <= 128:
		alo, ahi := uint64(n)*xxPrime64_1, uint64(0)
		if n > 32 {
			if n > 64 {
				if n > 96 {
					alo, ahi = mix32B(alo, ahi, in, 48, n-64, 96)
				}
				alo, ahi = mix32B(alo, ahi, in, 32, n-48, 64)
			}
			alo, ahi = mix32B(alo, ahi, in, 16, n-32, 32)
		}
		alo, ahi = mix32B(alo, ahi, in, 0, n-16, 0)
		return xxh128Finish(alo, ahi, n)
	case n <= 240:
		alo, ahi := uint64(n)*xxPrime64_1, uint64(0)
		for i := 0; i < 4; i++ {
			alo, ahi = mix32B(alo, ahi, in, 32*i, 32*i+16, 32*i)
		}
		alo, ahi = xxh3Avalanche(alo), xxh3Avalanche(ahi)
		for i := 4; i < n/32; i++ {
			alo, ahi = mix32B(alo, ahi, in, 32*i, 32*i+16, xxMidSizeStartOffset+32*(i-4))
		}
		alo, ahi = mix32B(alo, ahi, in, n-16, n-32, xxSecretSizeMin-xxMidSizeLastOffset-16)
		return xxh128Finish(alo, ahi, n)
	}
	return xxh3HashLong128(in)
}

// xxh128Finish is the common end of the 17–240 byte paths.
func xxh128Finish(alo, ahi uint64, n int) (hi, lo uint64) {
	lo = alo + ahi
	hi = alo*xxPrime64_1 + ahi*xxPrime64_4 + uint64(n)*xxPrime64_2
	return -xxh3Avalanche(hi), xxh3Avalanche(lo)
}

// xxh3HashLong128 is XXH3_hashLong_128b: stripes of 64 bytes accumulated in blocks of 16,
// the accumulators scrambled after each block, the last stripe taken from the end.
func xxh3HashLong128(in []byte) (hi, lo uint64) {
	acc := [xxAccNB]uint64{xxPrime32_3, xxPrime64_1, xxPrime64_2, xxPrime64_3, xxPrime64_4, xxPrime32_2, xxPrime64_5, xxPrime32_1}
	n := len(in)
	stripesPerBlock := (xxSecretSize - xxStripeLen) / xxSecretConsumeRate
	blockLen := xxStripeLen * stripesPerBlock
	blocks := (n - 1) / blockLen
	for b := 0; b < blocks; b++ {
		for s := 0; s < stripesPerBlock; s++ {
			accumulate512(&acc, in[b*blockLen+s*xxStripeLen:], s*xxSecretConsumeRate)
		}
		scrambleAcc(&acc, xxSecretSize-xxStripeLen)
	}
	stripes := ((n - 1) - blockLen*blocks) / xxStripeLen
	for s := 0; s < stripes; s++ {
		accumulate512(&acc, in[blocks*blockLen+s*xxStripeLen:], s*xxSecretConsumeRate)
	}
	accumulate512(&acc, in[n-xxStripeLen:], xxSecretSize-xxStripeLen-xxSecretLastAccStart)
	lo = mergeAccs(&acc, xxSecretMergeStart, uint64(n)*xxPrime64_1)
	hi = mergeAccs(&acc, xxSecretSize-8*xxAccNB-xxSecretMergeStart, ^(uint64(n) * xxPrime64_2))
	return hi, lo
}

func accumulate512(acc *[xxAccNB]uint64, in []byte, s int) {
	for i := 0; i < xxAccNB; i++ {
		v := rd64(in, 8*i)
		k := v ^ sec64(s+8*i)
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

func scrambleAcc(acc *[xxAccNB]uint64, s int) {
	for i := 0; i < xxAccNB; i++ {
		a := acc[i]
		a ^= a >> 47
		a ^= sec64(s + 8*i)
		a *= xxPrime32_1
		acc[i] = a
	}
}

func mergeAccs(acc *[xxAccNB]uint64, s int, start uint64) uint64 {
	r := start
	for i := 0; i < 4; i++ {
		r += mulFold64(acc[2*i]^sec64(s+16*i), acc[2*i+1]^sec64(s+16*i+8))
	}
	return xxh3Avalanche(r)
}
