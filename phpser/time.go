package phpser

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CarbonClass is the class Marshal writes for time.Time values, the one Laravel's
// now() and Date facade produce.
const CarbonClass = `Illuminate\Support\Carbon`

// carbonLayout is PHP's "Y-m-d H:i:s.u", the date DateTime::__serialize writes.
const carbonLayout = "2006-01-02 15:04:05.000000"

// TimeOf reads a serialized DateTime, DateTimeImmutable or Carbon object (any class
// with the date, timezone_type and timezone properties PHP writes):
//   - timezone_type 1: a UTC offset such as "+02:00";
//   - timezone_type 2: an abbreviation such as "CEST" (the offsets PHP's timelib uses);
//   - timezone_type 3: a tz database name such as "Europe/Berlin", loaded through
//     time.LoadLocation (import time/tzdata where the system has no zoneinfo).
//
// The date is the wall time in that zone.
func TimeOf(v *Value) (time.Time, error) {
	v = v.Deref()
	if v == nil || v.kind != KindObject {
		return time.Time{}, errors.New("phpser: a date needs a DateTime object")
	}
	date, ok1 := v.Prop("date")
	tzType, ok2 := v.Prop("timezone_type")
	tz, ok3 := v.Prop("timezone")
	if !ok1 || !ok2 || !ok3 || date.kind != KindString || tzType.kind != KindInt || tz.kind != KindString {
		return time.Time{}, errors.New("phpser: " + v.str + " lacks the date/timezone_type/timezone properties of a DateTime")
	}
	loc, err := phpLocation(tzType.num, tz.str)
	if err != nil {
		return time.Time{}, err
	}
	return parsePHPDate(date.str, loc)
}

func parsePHPDate(s string, loc *time.Location) (time.Time, error) {
	if t, ok := parseCarbonDate(s, loc); ok {
		return t, nil
	}
	return parsePHPDateAny(s, loc)
}

// parsePHPDateAny reads every date PHP's DateTime::__unserialize accepts: a year of any
// length (and sign), fractions of up to nine digits or none.
func parsePHPDateAny(s string, loc *time.Location) (time.Time, error) {
	bad := func() (time.Time, error) {
		return time.Time{}, errors.New("phpser: date " + strconv.Quote(s) + " is not Y-m-d H:i:s.u")
	}
	i, neg := 0, false
	if strings.HasPrefix(s, "-") {
		neg, i = true, 1
	}
	num := func(width int, exact bool) (int, bool) {
		j := i
		for j < len(s) && s[j]-'0' <= 9 && (!exact || j-i < width) {
			j++
		}
		if j-i < width || j-i > 9 {
			return 0, false
		}
		n, _ := strconv.Atoi(s[i:j])
		i = j
		return n, true
	}
	sep := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	year, ok := num(4, false)
	if !ok || !sep('-') {
		return bad()
	}
	if neg {
		year = -year
	}
	var f [5]int
	for k, c := range []byte{'-', ' ', ':', ':', 0} {
		n, ok := num(2, true)
		if !ok || (c != 0 && !sep(c)) {
			return bad()
		}
		f[k] = n
	}
	nsec := 0
	if sep('.') {
		start := i
		for i < len(s) && s[i]-'0' <= 9 && i-start < 9 {
			i++
		}
		if i == start {
			return bad()
		}
		nsec, _ = strconv.Atoi(s[start:i])
		for range 9 - (i - start) {
			nsec *= 10
		}
	}
	if i != len(s) || f[0] < 1 || f[0] > 12 || f[1] < 1 || f[1] > 31 || f[2] > 23 || f[3] > 59 || f[4] > 59 {
		return bad()
	}
	return time.Date(year, time.Month(f[0]), f[1], f[2], f[3], f[4], nsec, loc), nil
}

// parseCarbonDate reads the one form PHP writes, "Y-m-d H:i:s.u" with a four-digit
// year (what every DateTime of years 1000 to 9999 serializes to), without parsePHPDate's
// general grammar; ok is false for anything else, which parsePHPDate then reads or
// refuses.
func parseCarbonDate(s string, loc *time.Location) (t time.Time, ok bool) {
	if len(s) != len("2006-01-02 15:04:05.000000") || s[4] != '-' || s[7] != '-' || s[10] != ' ' ||
		s[13] != ':' || s[16] != ':' || s[19] != '.' {
		return t, false
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range []byte(s[from:to]) {
			if c-'0' > 9 {
				ok = false
				return 0
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	ok = true
	year, month, day := num(0, 4), num(5, 7), num(8, 10)
	hour, minute, sec, us := num(11, 13), num(14, 16), num(17, 19), num(20, 26)
	if !ok || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return t, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, us*1000, loc), true
}

var locCache sync.Map // zone name -> *time.Location

func phpLocation(tzType int64, tz string) (*time.Location, error) {
	switch tzType {
	case 1:
		if len(tz) == 6 && (tz[0] == '+' || tz[0] == '-') && tz[3] == ':' {
			h, err1 := strconv.Atoi(tz[1:3])
			m, err2 := strconv.Atoi(tz[4:6])
			if err1 == nil && err2 == nil && h <= 99 && m <= 59 {
				off := h*3600 + m*60
				if tz[0] == '-' {
					off = -off
				}
				return time.FixedZone(tz, off), nil
			}
		}
		return nil, errors.New("phpser: timezone offset " + strconv.Quote(tz) + " is not ±HH:MM")
	case 2:
		if off, ok := tzAbbreviations[strings.ToUpper(tz)]; ok {
			return time.FixedZone(strings.ToUpper(tz), off), nil
		}
		return nil, errors.New("phpser: unknown timezone abbreviation " + strconv.Quote(tz))
	case 3:
		if tz == "UTC" {
			return time.UTC, nil
		}
		if l, ok := locCache.Load(tz); ok {
			return l.(*time.Location), nil
		}
		if tz == "" || tz == "Local" {
			return nil, errors.New("phpser: invalid timezone " + strconv.Quote(tz))
		}
		l, err := time.LoadLocation(tz)
		if err != nil {
			return nil, errors.New("phpser: unknown timezone " + strconv.Quote(tz) + ": " + err.Error())
		}
		locCache.Store(tz, l)
		return l, nil
	}
	return nil, errors.New("phpser: unknown timezone_type " + strconv.FormatInt(tzType, 10))
}

// NewTime returns t as a serialized date object of the given class (CarbonClass when
// empty): date in t's zone as Y-m-d H:i:s.u, timezone_type 3 with the zone's tz
// database name. A time in time.Local (which has no portable name) is written in UTC;
// a fixed zone without a tz database name is written as timezone_type 1 (its offset).
func NewTime(t time.Time, class string) *Value {
	if class == "" {
		class = CarbonClass
	}
	t, tzType, tz := phpZone(t)
	return NewObject(class,
		PublicProp("date", String(t.Format(carbonLayout))),
		PublicProp("timezone_type", Int(tzType)),
		PublicProp("timezone", String(tz)))
}

func phpZone(t time.Time) (time.Time, int64, string) {
	loc := t.Location()
	if loc == time.UTC {
		return t, 3, "UTC"
	}
	if loc == time.Local {
		return t.UTC(), 3, "UTC"
	}
	// A zone is written by name only when PHP's zone of that name gives the same
	// offset at t: a time.FixedZone("CET", 3600) in July is not PHP's "CET".
	if l := loadZone(loc.String()); l != nil {
		_, off := t.Zone()
		if _, off2 := t.In(l).Zone(); off == off2 {
			return t, 3, loc.String()
		}
	}
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	tz := []byte{sign, byte('0' + off/36000%10), byte('0' + off/3600%10), ':', byte('0' + off/600%6), byte('0' + off/60%10)}
	return t, 1, string(tz)
}

var zoneCache sync.Map // name -> *time.Location, or nil when time.LoadLocation fails

func loadZone(name string) *time.Location {
	if name == "" || name == "Local" {
		return nil
	}
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location)
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		l = nil
	}
	zoneCache.Store(name, l)
	return l
}

// appendTime writes t as a date object of the given class straight into b.
func appendTime(b []byte, t time.Time, class string) []byte {
	t, tzType, tz := phpZone(t)
	var db [48]byte
	date := appendCarbonDate(db[:0], t)
	b = appendLenQuoted(b, "O:", class)
	b = append(b, `:3:{s:4:"date";s:`...)
	b = appendInt(b, int64(len(date)))
	b = append(b, ':', '"')
	b = append(b, date...)
	b = append(b, `";s:13:"timezone_type";i:`...)
	b = appendInt(b, tzType)
	b = append(b, `;s:8:"timezone";`...)
	return append(appendLenQuoted(b, "s:", tz), ';', '}')
}

// appendCarbonDate is t.AppendFormat(b, carbonLayout) written out for the years PHP
// writes with four digits, which is most of Marshal's work on a date otherwise.
func appendCarbonDate(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, carbonLayout)
	}
	hour, minute, sec := t.Clock()
	two := func(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }
	b = two(two(b, year/100), year%100)
	b = two(append(b, '-'), int(month))
	b = two(append(b, '-'), day)
	b = two(append(b, ' '), hour)
	b = two(append(b, ':'), minute)
	b = two(append(b, ':'), sec)
	us := t.Nanosecond() / 1000 // Go's layout truncates, as PHP's "u" does
	return two(two(two(append(b, '.'), us/10000), us/100%100), us%100)
}

// tzAbbreviations are the offsets (seconds east of UTC) PHP's timelib gives the zone
// abbreviations a timezone_type 2 date can carry; read from PHP 8.2 by parsing a date
// in each abbreviation DateTimeZone::listAbbreviations() knows.
var tzAbbreviations = map[string]int{
	"A": 3600, "ACDT": 37800, "ACST": 34200, "ADDT": -7200, "ADT": -10800, "AEDT": 39600,
	"AEST": 36000, "AHDT": -32400, "AHST": -36000, "AKDT": -28800, "AKST": -32400,
	"AMT": -13840, "APT": -10800, "AST": -14400, "AWDT": 32400, "AWST": 28800, "AWT": -10800,
	"B": 7200, "BDST": 7200, "BDT": -36000, "BMT": -14309, "BST": 3600, "C": 10800,
	"CAST": 34200, "CAT": 7200, "CDDT": -14400, "CDT": -18000, "CEMT": 10800, "CEST": 7200,
	"CET": 3600, "CHST": 36000, "CMT": -15408, "CPT": -18000, "CST": -21600, "CWT": -18000,
	"D": 14400, "DMT": -1521, "E": 18000, "EAT": 10800, "EDDT": -10800, "EDT": -14400,
	"EEST": 10800, "EET": 7200, "EMT": -26248, "EPT": -14400, "EST": -18000, "EWT": -14400,
	"F": 21600, "FFMT": -14660, "FMT": -4056, "G": 25200, "GDT": 39600, "GMT": 0,
	"GST": 36000, "H": 28800, "HDT": -34200, "HKST": 32400, "HKT": 28800, "HMT": -19776,
	"HPT": -34200, "HST": -36000, "HWT": -34200, "I": 32400, "IDDT": 14400, "IDT": 10800,
	"IMT": 25025, "IST": 7200, "JDT": 36000, "JMT": 8440, "JST": 32400, "K": 36000,
	"KDT": 36000, "KMT": 5736, "KST": 30600, "L": 39600, "LST": 9394, "M": 43200,
	"MDDT": -18000, "MDST": 16279, "MDT": -21600, "MEST": 7200, "MET": 3600, "MMT": 9017,
	"MPT": -21600, "MSD": 14400, "MSK": 10800, "MST": -25200, "MWT": -21600, "N": -3600,
	"NDDT": -5400, "NDT": -9052, "NPT": -9000, "NST": -12600, "NWT": -9000, "NZDT": 46800,
	"NZMT": 41400, "NZST": 43200, "O": -7200, "P": -10800, "PDDT": -21600, "PDT": -25200,
	"PKST": 21600, "PKT": 18000, "PLMT": 25590, "PMT": -13236, "PPMT": -17340, "PPT": -25200,
	"PST": -28800, "PWT": -25200, "Q": -14400, "QMT": -18840, "R": -18000, "RMT": 5794,
	"S": -21600, "SAST": 7200, "SDMT": -16800, "SJMT": -20173, "SMT": -13884, "SST": -39600,
	"T": -25200, "TBMT": 10751, "TMT": 12344, "U": -28800, "UCT": 0, "V": -32400,
	"W": -36000, "WAST": 7200, "WAT": 3600, "WEMT": 7200, "WEST": 3600, "WET": 0,
	"WIB": 25200, "WIT": 32400, "WITA": 28800, "WMT": 5040, "X": -39600, "Y": -43200,
	"YDDT": -25200, "YDT": -28800, "YPT": -28800, "YST": -32400, "YWT": -28800, "Z": 0,
	"UTC": 0,
}
