#!/usr/bin/env node
import "../dist/telegram-webhook-cli.js";
