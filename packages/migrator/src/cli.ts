console.log("platform-migrate");
