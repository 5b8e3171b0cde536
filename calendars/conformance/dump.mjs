// Prints, for each calendar asked on standard input, the dates of the
// date-holidays package's holidays of the given types in the given years
// (only those of the given date-holidays rules when "rules" is set):
// input [{"name", "country", "state", "types", "rules", "from", "to"}], output
// {"name": ["YYYY-MM-DD", ...]}. Run by calendars/conformance_test.go.
import Holidays from 'date-holidays';
import { readFileSync } from 'node:fs';

const asks = JSON.parse(readFileSync(0, 'utf8'));
const out = {};
for (const a of asks) {
  const hd = a.state ? new Holidays(a.country, a.state) : new Holidays(a.country);
  if (!hd.getCountries()[a.country] || (a.state && !hd.getStates(a.country)?.[a.state])) {
    throw new Error(`date-holidays has no ${a.country}${a.state ? '/' + a.state : ''} (for ${a.name})`);
  }
  const dates = new Set();
  for (let y = a.from; y <= a.to; y++) {
    for (const h of hd.getHolidays(y)) {
      if (a.types.includes(h.type) && (!a.rules || a.rules.includes(h.rule))) dates.add(h.date.slice(0, 10));
    }
  }
  out[a.name] = [...dates].sort();
}
process.stdout.write(JSON.stringify(out));
