// The same data for each candidate: 10 alarms ranked (bars), 90 days of MTTR (a line).
export const alarms = Array.from({ length: 10 }, (_, i) => ({ name: `alarm_${i}`, count: 100 - i * 7 }));
export const days = Array.from({ length: 90 }, (_, i) => ({ day: Date.UTC(2025, 0, 1) / 1000 + i * 86400, mean: 300 + ((i * 37) % 250) }));
