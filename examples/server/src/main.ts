console.log("server");
