#!/usr/bin/env node
import '../dist/pitcrew-agent.mjs';
